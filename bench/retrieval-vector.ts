// Vector-only recall on the tune split of the retrieval dev set: for each paraphrase / related
// query, the rank of its trail among all trails by cosine alone (no lexical fusion), beside its
// rank in the fused search. The tuning aid for the embedding model (tools/model/retrofit.ts).
// Run: bun bench/retrieval-vector.ts [--per-query]
import { loadDevset } from "../test/support/devset";
import { benchDir, inProcessColony, removeDir } from "./lib/colony";
import { publishDevset } from "./lib/devset-colony";
import { distractorTrails } from "./lib/corpus";
import { f3, REPO_DIR } from "./lib/report";

const devset = loadDevset();
const perQuery = process.argv.includes("--per-query");
const dir = benchDir();
const colony = await inProcessColony(dir);
try {
  const service = colony.service;
  const { store, vectors, embedder } = colony.subsystems;
  const { published, expected } = await publishDevset(colony, devset.cases, distractorTrails(REPO_DIR, 5000, 7));
  const stats = new Map<string, { n: number; v1: number; v3: number; f1: number; f3: number }>();
  for (const p of published.filter((p) => p.c.split === "tune")) {
    const wantId = expected.get(p.c.id)!;
    const seq = (await store!.trails.byId(wantId))?.seq;
    for (const q of p.c.queries) {
      const [qv] = await embedder!.embed([q.text]);
      const vec = await vectors!.search(qv!, 50);
      const vr = vec.findIndex((h) => h.id === seq);
      const env = await service.search.search(
        { query: q.text, limit: 3 },
        { address: "127.0.0.1", client: "anon-loopback", agent: "bench-vector", agentDeclared: true },
      );
      const fr = env.results.findIndex((r) => r.trail_id === wantId);
      const s = stats.get(q.kind) ?? { n: 0, v1: 0, v3: 0, f1: 0, f3: 0 };
      s.n++;
      if (vr === 0) s.v1++;
      if (vr >= 0 && vr < 3) s.v3++;
      if (fr === 0) s.f1++;
      if (fr >= 0 && fr < 3) s.f3++;
      stats.set(q.kind, s);
      if (perQuery && q.kind !== "variant") console.log(`${p.c.id} ${q.kind} vec=${vr} fused=${fr}`);
    }
  }
  for (const [kind, s] of stats) {
    console.log(
      `tune ${kind.padEnd(10)} n=${s.n} vector R@1 ${f3(s.v1 / s.n)} R@3 ${f3(s.v3 / s.n)} | fused R@1 ${f3(s.f1 / s.n)} R@3 ${f3(s.f3 / s.n)}`,
    );
  }
} finally {
  await colony.stop();
  removeDir(dir);
}
