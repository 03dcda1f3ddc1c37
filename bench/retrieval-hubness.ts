// Offline experiment (issue 16, session 8; not adopted, bench/RESULTS.md): a hubness penalty in the
// second stage. Each of the 10 reranked candidates loses lambda times its mean cosine to its 10
// nearest trails (CSLS-like), so a trail that is near everything ranks lower. Tune split unless
// --holdout. Run: node_modules/.bin/bun bench/retrieval-hubness.ts
import { loadDevset } from "../test/support/devset";
import { benchDir, inProcessColony, removeDir } from "./lib/colony";
import { publishDevset } from "./lib/devset-colony";
import { distractorTrails } from "./lib/corpus";
import { REPO_DIR } from "./lib/report";
const split = process.argv.includes("--holdout") ? "holdout" : "tune";
const devset = loadDevset();
const dir = benchDir();
const colony = await inProcessColony(dir);
try {
  const { store, vectors, db } = colony.subsystems;
  const { published } = await publishDevset(colony, devset.cases, distractorTrails(REPO_DIR, 5000, 7));
  const vecOf = (seq: number) => {
    const r = db!.query<{ embedding: Uint8Array }, [number]>("SELECT embedding FROM vec_float WHERE rowid = ?").get(seq);
    return r ? new Float32Array(r.embedding.slice().buffer) : null;
  };
  const hubCache = new Map<number, number>();
  const hub = async (seq: number) => {
    if (hubCache.has(seq)) return hubCache.get(seq)!;
    const v = vecOf(seq);
    let h = 0;
    if (v) {
      const hits = (await vectors!.search(v, 11)).filter((x) => x.id !== seq).slice(0, 10);
      h = hits.reduce((s, x) => s + x.similarity, 0) / Math.max(1, hits.length);
    }
    hubCache.set(seq, h);
    return h;
  };
  const LAMBDAS = [0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1];
  const stats: Record<string, { n: number; hit: number[]; hit3: number[] }> = {};
  for (const p of published.filter((p) => p.c.split === split)) {
    const want0 = (await colony.service.trails.status(p.id)) as { status: string; merged_into?: string };
    const wantId = want0.status === "merged" ? want0.merged_into! : p.id;
    for (const q of p.c.queries) {
      const env = await colony.service.search.explain({ query: q.text, limit: 10 });
      const s = (stats[q.kind] ??= { n: 0, hit: LAMBDAS.map(() => 0), hit3: LAMBDAS.map(() => 0) });
      s.n++;
      const rows: { id: string; fp: boolean; i: number; base: number; cos: number; hub: number }[] = [];
      for (const [i, e] of env.explanations.entries()) {
        const rec = await store!.trails.byId(e.trail_id);
        const base = e.score ?? 0;
        rows.push({ id: e.trail_id, fp: e.via === "fingerprint", i, base, cos: e.cosine ?? 0, hub: rec ? await hub(rec.seq) : 0 });
      }
      LAMBDAS.forEach((l, li) => {
        const order = [...rows].sort((a, b) =>
          a.fp !== b.fp ? (a.fp ? -1 : 1) : a.fp ? a.i - b.i : b.base - l * b.hub - (a.base - l * a.hub),
        );
        const idx = order.findIndex((r) => r.id === wantId);
        if (idx === 0) s.hit[li]!++;
        if (idx >= 0 && idx < 3) s.hit3[li]!++;
      });
    }
  }
  for (const [k, s] of Object.entries(stats))
    console.log(
      `${split} ${k.padEnd(10)} n=${s.n} ` +
        LAMBDAS.map((l, i) => `λ${l}: ${(s.hit[i]! / s.n).toFixed(3)}/${(s.hit3[i]! / s.n).toFixed(3)}`).join("  "),
    );
} finally {
  await colony.stop();
  removeDir(dir);
}
