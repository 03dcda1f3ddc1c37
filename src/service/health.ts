// Liveness and readiness (decisions §11). Readiness really exercises each subsystem: a read and a
// write on the key-value table (so a full disk makes the colony unready while writes fail, and
// ready again by itself once they succeed), a query on the vector table and an embedding of a
// probe string. The lexical check fails while the lexical index is rebuilt for new tokens.
import type { ProbeResult } from "../store/ports";
import type { CheckName, Subsystems } from "./subsystems";
import { errorMessage } from "../core/error-message";

export interface Readiness {
  status: "ready" | "unavailable";
  /** The store the kv and vector checks exercised: sqlite or postgres. */
  backend: Subsystems["backend"];
  checks: Record<CheckName, ProbeResult>;
  queue_depth: number;
}

async function probe(failure: string | undefined, run: () => unknown | Promise<unknown>): Promise<ProbeResult> {
  const started = performance.now();
  if (failure) return { ok: false, latency_ms: 0, detail: failure };
  try {
    await run();
    return { ok: true, latency_ms: round(performance.now() - started) };
  } catch (err) {
    return {
      ok: false,
      latency_ms: round(performance.now() - started),
      detail: errorMessage(err),
    };
  }
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

const PROBE_KEY = "readiness.probe";
const PROBE_TEXT = "readiness probe: ModuleNotFoundError: No module named 'colony'";

/**
 * `lexicalStatus`: null when the lexical index is on the current tokens, else what its rebuild is
 * doing (the colony is not ready meanwhile: search would miss what the index does not hold yet).
 */
export async function readiness(
  s: Subsystems,
  queueDepth: () => Promise<number>,
  lexicalStatus: () => Promise<string | null> = async () => null,
): Promise<Readiness> {
  const kv = await probe(s.failures.kv, async () => {
    await s.store!.kv.get(PROBE_KEY);
    await s.store!.kv.set(PROBE_KEY, new Date().toISOString());
  });
  const vector = await probe(s.failures.vector, () => {
    const v = new Float32Array(s.vectors!.dim);
    v[0] = 1;
    return s.vectors!.search(v, 1);
  });
  const embedding = await probe(s.failures.embedding, async () => {
    const [v] = await s.embedder!.embed([PROBE_TEXT]);
    if (!v || v.length !== s.embedder!.info.dim || !Number.isFinite(v[0]!)) {
      throw new Error("the model returned no usable vector");
    }
  });
  const lexical = await probe(s.failures.lexical ?? s.failures.kv, async () => {
    const rebuilding = await lexicalStatus();
    if (rebuilding) throw new Error(rebuilding);
  });
  const checks = { kv, vector, embedding, lexical };
  const ok = kv.ok && vector.ok && embedding.ok && lexical.ok;
  return { status: ok ? "ready" : "unavailable", backend: s.backend, checks, queue_depth: await queueDepth() };
}
