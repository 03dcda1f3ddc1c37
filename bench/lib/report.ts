// Small helpers every benchmark shares: flags, percentiles, printing, and the machine-readable
// figures each script writes to bench/out/<name>.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO_DIR = resolve(import.meta.dir, "../..");
export const OUT_DIR = join(REPO_DIR, "bench/out");
export const BUN = join(REPO_DIR, "node_modules/.bin/bun");

export const args = process.argv.slice(2);
/** `--quick`: small sizes, a smoke run. */
export const QUICK = args.includes("--quick") || process.env.BENCH_QUICK === "1";

export function flag(name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function summarize(xs: number[]) {
  return {
    n: xs.length,
    p50: percentile(xs, 50),
    p90: percentile(xs, 90),
    p99: percentile(xs, 99),
    max: Math.max(...xs),
    mean: xs.reduce((a, b) => a + b, 0) / xs.length,
  };
}

export const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : String(x));
export const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : String(x));
export const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : String(x));
export const verdict = (ok: boolean) => (ok ? "met" : "MISSED");

export function log(line: string): void {
  console.log(line);
}

/** Collects the figures of one script and writes them as JSON at the end. */
export class Figures {
  private readonly data: Record<string, unknown> = {};
  constructor(readonly name: string) {
    this.data.started_at = new Date().toISOString();
    this.data.quick = QUICK;
  }
  set(key: string, value: unknown): void {
    this.data[key] = value;
  }
  write(): string {
    mkdirSync(OUT_DIR, { recursive: true });
    this.data.finished_at = new Date().toISOString();
    const file = join(OUT_DIR, `${this.name}${QUICK ? ".quick" : ""}.json`);
    writeFileSync(file, JSON.stringify(this.data, null, 2) + "\n");
    console.log(`figures written to ${file}`);
    return file;
  }
}

/** A deterministic PRNG (mulberry32), so every run builds the same data. */
export { mulberry32 as rng } from "../../tools/prng";

export function shuffle<T>(xs: T[], rand: () => number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

export const pick = <T>(xs: readonly T[], rand: () => number): T => xs[Math.floor(rand() * xs.length)]!;

/** Resident set size of a process in bytes, from /proc. */
export async function rssOf(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb * 1024;
}
