// An experiment, measured and not adopted (bench/RESULTS.md, session 7): would several vectors per
// trail (its whole text, its error line, its explanation; a trail's cosine is the best of the three)
// find paraphrased and related errors better than the one vector of the whole text? The colony's
// vector index is replaced in process by an exact scan over the three vectors, and the dev set's
// queries of one split (SPLIT=tune by default) run through the real search, once with each.
// Run: node_modules/.bin/bun bench/retrieval-multivector.ts
import { loadDevset } from "../test/support/devset";
import { benchDir, inProcessColony, removeDir } from "./lib/colony";
import { publishDevset } from "./lib/devset-colony";
import { distractorTrails } from "./lib/corpus";
import { REPO_DIR } from "./lib/report";
import type { Trail } from "../src/core/trail";
const devset = loadDevset();
const dir = benchDir();
const colony = await inProcessColony(dir);
const split = process.env.SPLIT ?? "tune";
try {
  const service = colony.service as any;
  const { store, vectors, embedder } = colony.subsystems as any;
  const { published, expected } = await publishDevset(colony, devset.cases, distractorTrails(REPO_DIR, 5000, 7));
  const all: { seq: number; trail: Trail }[] = [];
  for (let after = 0; ; ) {
    const page = await store.trails.indexedAfter(after, 1000);
    if (!page.length) break;
    for (const r of page) all.push({ seq: r.seq, trail: r.trail });
    after = page[page.length - 1].seq;
  }
  console.log("indexed", all.length);
  const j = (xs: (string | undefined)[]) => xs.filter((s): s is string => !!s).join("\n");
  const texts = {
    all: (t: Trail) => j([t.problem.error_type, t.problem.error, t.problem.description, t.problem.root_cause, t.solution.summary]),
    err: (t: Trail) => j([t.problem.error_type, t.problem.error]),
    rest: (t: Trail) => j([t.problem.description, t.problem.root_cause, t.solution.summary]) || j([t.problem.error]),
  };
  const V: Record<string, Map<number, Float32Array>> = {};
  for (const [k, f] of Object.entries(texts)) {
    V[k] = new Map();
    for (let i = 0; i < all.length; i += 256) {
      const chunk = all.slice(i, i + 256);
      const es = await embedder.embed(chunk.map((x) => f(x.trail)));
      chunk.forEach((x, n) => V[k]!.set(x.seq, es[n]));
    }
  }
  const dot = (a: Float32Array, b: Float32Array) => {
    let s = 0;
    for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
    return s;
  };
  const score = (q: Float32Array, seq: number) => Math.max(dot(q, V.all!.get(seq)!), dot(q, V.err!.get(seq)!), dot(q, V.rest!.get(seq)!));
  const origSearch = vectors.search.bind(vectors),
    origSims = vectors.similarities.bind(vectors);
  const patched = {
    search: async (q: Float32Array, k: number) =>
      all
        .map((x) => ({ id: x.seq, similarity: score(q, x.seq) }))
        .sort((a, b) => b.similarity - a.similarity)
        .slice(0, k),
    similarities: async (q: Float32Array, ids: number[]) => new Map(ids.filter((id) => V.all!.has(id)).map((id) => [id, score(q, id)])),
  };
  const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "bench-mv", agentDeclared: true };
  for (const mode of ["single", "max3"]) {
    if (mode === "max3") {
      vectors.search = patched.search;
      vectors.similarities = patched.similarities;
    } else {
      vectors.search = origSearch;
      vectors.similarities = origSims;
    }
    const stats = new Map<string, number[]>();
    let weakNeg = 0;
    for (const p of published.filter((p: any) => p.c.split === split)) {
      const want = expected.get(p.c.id)!;
      for (const q of p.c.queries) {
        if (q.kind === "variant") continue;
        const env = await service.search.search({ query: q.text, limit: 3 }, caller);
        const r = env.results.findIndex((x: any) => x.trail_id === want);
        const s = stats.get(q.kind) ?? [0, 0, 0];
        s[0]++;
        if (r === 0) s[1]++;
        if (r >= 0 && r < 3) s[2]++;
        stats.set(q.kind, s);
      }
    }
    for (const n of devset.negatives.filter((n: any) => n.split === split)) {
      const env = await service.search.search({ query: n.text, limit: 3 }, caller);
      if (env.results[0]?.match.confidence === "weak" || !env.results.length) weakNeg++;
    }
    console.log(
      mode,
      [...stats].map(([k, [n, a, b]]) => `${k} n=${n} R@1 ${(a / n).toFixed(3)} R@3 ${(b / n).toFixed(3)}`).join(" | "),
      "negatives weak",
      weakNeg,
    );
  }
} finally {
  await colony.stop();
  removeDir(dir);
}
