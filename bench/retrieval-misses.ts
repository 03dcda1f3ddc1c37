// Tune-split misses of the retrieval dev set: for each paraphrase / related query of the tune split
// whose trail is not first, where the trail stood in each retriever. Run: bun bench/retrieval-misses.ts
import { lexicalIndexTokens } from "../src/core/lexical";
import { loadDevset } from "../test/support/devset";
import { benchDir, inProcessColony, removeDir } from "./lib/colony";
import { publishDevset } from "./lib/devset-colony";
import { distractorTrails } from "./lib/corpus";
import { REPO_DIR } from "./lib/report";

const devset = loadDevset();
const split = process.argv.includes("--holdout") ? "holdout" : "tune";
const dir = benchDir();
const colony = await inProcessColony(dir);
try {
  const service = colony.service;
  const { store, vectors, embedder } = colony.subsystems;
  const { published, expected } = await publishDevset(colony, devset.cases, distractorTrails(REPO_DIR, 5000, 7));
  const seqOf = new Map<string, number>();
  for (const p of published) {
    const rec = await store!.trails.byId(expected.get(p.c.id)!);
    if (rec) seqOf.set(p.c.id, rec.seq);
  }
  let n = 0;
  for (const p of published.filter((p) => p.c.split === split)) {
    for (const q of p.c.queries.filter((q) => q.kind !== "variant")) {
      const env = await service.search.explain({ query: q.text, limit: 5 });
      const want = (await service.trails.status(p.id)) as { status: string; merged_into?: string };
      const wantId = want.status === "merged" ? want.merged_into! : p.id;
      const idx = env.results.findIndex((r) => r.trail_id === wantId);
      if (idx === 0) continue;
      n++;
      const [qv] = await embedder!.embed([q.text]);
      const lex = await store!.lexical.search(lexicalIndexTokens(q.text), 200);
      const vec = await vectors!.search(qv!, 200);
      const seq = seqOf.get(p.c.id);
      const lr = lex.findIndex((h) => h.id === seq);
      const vr = vec.findIndex((h) => h.id === seq);
      const sim = seq === undefined ? null : (await vectors!.similarities(qv!, [seq])).get(seq);
      const top = env.explanations[0];
      console.log(
        `--- ${p.c.id} ${q.kind} rank=${idx < 0 ? "-" : idx + 1} lexRank=${lr} lexScore=${lr >= 0 ? (lex[lr]!.score / lex[0]!.score).toFixed(2) : "-"} vecRank=${vr} cos=${sim?.toFixed(3)}`,
      );
      console.log(`  Q:   ${q.text.slice(0, 200)}`);
      console.log(`  ERR: ${p.c.error_line.slice(0, 160).replace(/\n/g, " ")}`);
      console.log(`  RC:  ${(p.c.root_cause ?? "").slice(0, 160)}`);
      console.log(
        `  TOP: ${env.results[0]?.trail.problem.error.slice(0, 140).replace(/\n/g, " ")} | lex=${top?.lexical_score?.toFixed(2)} cos=${top?.cosine?.toFixed(3)}`,
      );
    }
  }
  console.log(`misses: ${n}`);
} finally {
  await colony.stop();
  removeDir(dir);
}
