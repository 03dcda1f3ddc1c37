// Closed-loop A/B rounds, written once for the PostgreSQL benches that compare kinds of one
// transaction (queue-room, report-bound): N clients, each running one operation at a time until
// the round's time is up; the kinds alternate round after round so load drifts hit each alike, and
// the median of the rounds is shown.
import { f1, f2, type Figures, log, percentile } from "./report";

/** One kind: `timed` is measured; `after` (outside the timing) puts the state back. */
export interface LoopKind<T> {
  timed: (client: number) => Promise<T>;
  after?: (client: number, value: T) => Promise<void>;
}

export async function closedLoopRounds<T>(options: {
  clients: number[];
  rounds: number;
  seconds: number;
  kinds: Record<string, LoopKind<T>>;
  /** What one operation is called in the log and the figures ("publishes", "reports"). */
  unit: string;
  figures: Figures;
}): Promise<void> {
  const { clients: clientCounts, rounds, seconds, kinds, unit, figures } = options;
  for (const clients of clientCounts) {
    const results = new Map<string, { tps: number[]; p50: number[] }>();
    for (let round = 0; round < rounds; round++) {
      for (const [name, kind] of Object.entries(kinds)) {
        const latencies: number[] = [];
        const until = performance.now() + seconds * 1000;
        await Promise.all(
          Array.from({ length: clients }, async (_, client) => {
            while (performance.now() < until) {
              const t0 = performance.now();
              const value = await kind.timed(client);
              latencies.push(performance.now() - t0);
              await kind.after?.(client, value);
            }
          }),
        );
        const r = results.get(name) ?? { tps: [], p50: [] };
        r.tps.push(latencies.length / seconds);
        r.p50.push(percentile(latencies, 50));
        results.set(name, r);
      }
    }
    for (const [name, r] of results) {
      const tps = percentile(r.tps, 50);
      const p50 = percentile(r.p50, 50);
      log(`${clients} clients, ${name}: ${f1(tps)} ${unit}/s, p50 ${f2(p50)} ms`);
      figures.set(`${clients} clients, ${name}`, { [`${unit}_per_s`]: Number(f1(tps)), p50_ms: Number(f2(p50)) });
    }
  }
}
