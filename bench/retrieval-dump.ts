// Tuning aid (issue 16): dumps, for every query of the dev set's tune split and its negatives, the
// hybrid's candidates (lexical top 30 + vector top 30) with their raw features, so fusion rules can
// be compared offline. Output: bench/out/retrieval-dump-tune.json.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { lexicalFields } from "../src/core/enrichment";
import { lexicalTokens } from "../src/core/lexical";
import type { TrailRecord } from "../src/store/ports";
import { trailFromCase } from "../test/support/case-trail";
import { loadDevset } from "../test/support/devset";
import { benchDir, inProcessColony, removeDir, seedTrails } from "./lib/colony";
import { distractorTrails } from "./lib/corpus";
import { OUT_DIR, REPO_DIR } from "./lib/report";

const SPLIT = process.argv.includes("--holdout") ? "holdout" : "tune";
const K = 30;
const devset = loadDevset();
const dir = benchDir();
const colony = await inProcessColony(dir);
try {
  const service = colony.service;
  const { store, vectors, embedder, db } = colony.subsystems;
  const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "bench-devset", agentDeclared: true };
  const published = [];
  for (const c of devset.cases) {
    const body = (await service.trails.publish(trailFromCase(c), { ...caller, agent: `case-author-${c.id}` })).body;
    published.push({ c, id: body.trail_id });
  }
  await seedTrails(colony, distractorTrails(REPO_DIR, 5000, 7), { chunk: 2500 });
  const seqOf = new Map<string, number>();
  for (const p of published) {
    const s = (await service.trails.status(p.id)) as { status: string; merged_into?: string };
    const rec = await store!.trails.byId(s.status === "merged" ? s.merged_into! : p.id);
    seqOf.set(p.c.id, rec!.seq);
  }
  const docs = new Map<number, { error: string; body: string; rc: string }>();
  const rec = new Map<number, TrailRecord>();
  const fieldVec = new Map<number, Float32Array[]>();
  const dot = (a: Float32Array, b: Float32Array) => {
    let s = 0;
    for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
    return s;
  };
  const queries = [
    ...published
      .filter((p) => p.c.split === SPLIT)
      .flatMap((p) => p.c.queries.map((q) => ({ kind: q.kind, text: q.text, want: seqOf.get(p.c.id)! }))),
    ...devset.negatives.filter((n) => n.split === SPLIT).map((n) => ({ kind: "negative", text: n.text, want: -1 })),
  ];
  const out = [];
  // Word vectors (a word embedded alone), cached, for soft coverage: each query word's best
  // cosine to a word of the trail's error and root cause.
  const wordVec = new Map<string, Float32Array>();
  const vecsOf = async (words: string[]) => {
    const missing = words.filter((w) => !wordVec.has(w));
    for (let i = 0; i < missing.length; i += 256) {
      const batch = missing.slice(i, i + 256);
      const vs = await embedder!.embed(batch);
      batch.forEach((w, j) => wordVec.set(w, vs[j]!));
    }
    return words.map((w) => wordVec.get(w)!);
  };
  const soft = async (qWords: string[], dText: string) => {
    const dWords = [...new Set(lexicalTokens(dText))];
    const dv = await vecsOf(dWords);
    const qv = await vecsOf(qWords);
    const best = qWords.map((w, i) => (dWords.includes(w) ? 1 : Math.max(0, ...dv.map((v) => dot(v, qv[i]!)))));
    const n = best.length || 1;
    return [best.reduce((a, b) => a + b, 0) / n, ...[0.5, 0.6, 0.7, 0.8].map((t) => best.filter((b) => b >= t).length / n)];
  };
  for (const q of queries) {
    const [qv] = await embedder!.embed([q.text]);
    const tokens = lexicalTokens(q.text);
    const lex = await store!.lexical.search(tokens, K);
    const vec = await vectors!.search(qv!, K);
    const ids = [...new Set([...lex.map((h) => h.id), ...vec.map((h) => h.id)])];
    const sims = await vectors!.similarities(qv!, ids);
    for (const r of await store!.trails.bySeqs(ids.filter((id) => !rec.has(id)))) rec.set(r.seq, r);
    for (const r of [...rec.values()].filter((r) => ids.includes(r.seq) && !docs.has(r.seq))) {
      const f = lexicalFields(r.trail);
      const p = r.trail.problem;
      const fields = [p.error, p.root_cause ?? "", r.trail.solution.summary, (r.trail.solution.steps ?? []).join("\n")];
      fieldVec.set(r.seq, await embedder!.embed(fields.map((f) => f || " ")));
      docs.set(r.seq, {
        error: f.error,
        body: f.body,
        rc: lexicalTokens(`${r.trail.problem.error}\n${r.trail.problem.root_cause ?? ""}`).join(" "),
      });
    }
    const qWords = [...new Set(tokens)];
    const softOf = new Map<number, number[]>();
    for (const id of ids) {
      const r = rec.get(id)!;
      softOf.set(id, await soft(qWords, `${r.trail.problem.error}\n${r.trail.problem.root_cause ?? ""}`));
    }
    out.push({
      kind: q.kind,
      text: q.text,
      want: q.want,
      tokens,
      cands: ids.map((id) => ({
        id,
        lex: lex.find((h) => h.id === id)?.score ?? null,
        lexRank: lex.findIndex((h) => h.id === id),
        vecRank: vec.findIndex((h) => h.id === id),
        cos: sims.get(id) ?? null,
        fcos: fieldVec.get(id)!.map((v) => dot(v, qv!)),
        soft: softOf.get(id),
      })),
    });
  }
  const df = Object.fromEntries(
    db!
      .query<{ term: string; docs: number }, []>("SELECT term, docs FROM lexical_terms")
      .all()
      .map((r) => [r.term, r.docs]),
  );
  const total = db!.query<{ value: number }, []>("SELECT value FROM counters WHERE name = 'lexical_docs'").get()!.value;
  writeFileSync(join(OUT_DIR, `retrieval-dump-${SPLIT}.json`), JSON.stringify({ total, df, docs: Object.fromEntries(docs), queries: out }));
  console.log(`dumped ${out.length} queries, ${docs.size} docs`);
} finally {
  await colony.stop();
  removeDir(dir);
}
