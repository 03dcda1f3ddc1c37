// The retrieval dev set (eval/devset.json, issue 16), per split (tune / holdout):
// - fingerprints: the same-fingerprint rate of each case's variants (per miss class), collisions on
//   the distractor pairs, over every pair of error lines and variants of different cases whose
//   error class or code differ, and over every pair of the distractor corpus's real error strings
//   whose class or message template differ;
// - search, every case as a trail among real-error distractor trails: R@1 and R@3 per query kind,
//   the confidence of the top result (how often `strong` and `likely` are right), negatives rated
//   weak, and the calibration grid the confidence thresholds were chosen from (tune split).
// Measurement only: the normalizer and the thresholds are tuned on the tune split by hand.
// `--backend postgres` runs the search on PostgreSQL, `--backend both` on each store and prints the
// measures side by side with their difference (issue 18: within 0.02 on every measure).
// `--split tune` reads, measures and prints the tune split only (the cases, variants and negatives
// of the holdout split are dropped before anything is computed): for experiments that must not see
// holdout figures, e.g. comparing embedding models (COLONY_MODEL_DIR).
// `--dump FILE` writes every query's outcome as JSON lines (its case, kind, the rank of the trail it
// should find, and its first three results, named by case id or x and distractor number, with their
// cosine and confidence; FILE.sqlite and FILE.postgres with `--backend both`): two runs' dumps
// diffed show which queries moved.
// `--features FILE` writes every query's candidates with the inputs of both ranking stages, for
// bench/rank-replay.py.
// Run: node_modules/.bin/bun bench/devset.bench.ts [--quick] [--backend sqlite|postgres|both] [--split tune|holdout] [--dump FILE] [--features FILE]
import { readFileSync, writeFileSync } from "node:fs";
import { type Confidence, confidenceOf, coverageOf, lexicalCoverage, queryWords } from "../src/core/confidence";
import { embeddingText, lexicalFields } from "../src/core/enrichment";
import { lexicalIndexTokens } from "../src/core/lexical";
import { CANDIDATES_PER_RETRIEVER } from "../src/service/search";
import { NORMALIZER_VERSION, type NormalizerVersion } from "../src/core/error-normalizer";
import { fingerprint } from "../src/core/fingerprint";
import {
  casesInExternalSets,
  crossCaseCollisions,
  loadDevset,
  QUERY_KINDS,
  type QueryKind,
  SPLITS,
  type Split,
  VARIANT_RELATIONS,
} from "../test/support/devset";
import { type Backend, backendEnv, chosenBackends, stopBackends } from "./lib/backend";
import { benchDir, inProcessColony, removeDir } from "./lib/colony";
import { DEVSET_CALLER, publishDevset } from "./lib/devset-colony";
import { collisionsAmong, corpusIdentity, corpusLine, distractorTrails, errorLine, harvestErrorStrings } from "./lib/corpus";
import { f1, f3, Figures, flag, log, percentile, QUICK, REPO_DIR, rng } from "./lib/report";
import "./lib/message-template-experiment";

const DISTRACTORS = QUICK ? 1500 : 5000;
const backends = chosenBackends();
const splitArg = process.argv.includes("--split") ? process.argv[process.argv.indexOf("--split") + 1] : undefined;
if (splitArg !== undefined && !(SPLITS as readonly string[]).includes(splitArg)) {
  throw new Error(`--split must be one of ${SPLITS.join(", ")}, not ${splitArg}`);
}
/** The splits measured: both, or the one `--split` names. */
const splits: readonly Split[] = splitArg ? [splitArg as Split] : SPLITS;
const dumpFile = flag("--dump");
/**
 * `--features FILE`: every query's candidates as the search's two retrievers found them (the union
 * of each one's 30 best), with the inputs of both stages (BM25 over the query's best, cosine,
 * coverage, strength) and which trails the fingerprint matched, as JSON lines: ranking changes can
 * then be replayed and cross-validated offline (bench/rank-replay.py) without a run per setting.
 * Each query word's document frequency is read from SQLite's term counts (0 on PostgreSQL). Each
 * candidate lists the query's words in its error and root cause together, in each alone, and in its
 * whole lexical document, and how many distinct words its error and root cause have.
 */
const featuresFile = flag("--features");
/**
 * `--embeddings FILE` (with `--features`): the query's embedding and then each candidate's, in the
 * order of the features' candidate list, as little-endian float32 (the model's dimension each), so
 * a ranking change that needs the vectors can be replayed too (RESULTS.md, session 18).
 */
const embeddingsFile = flag("--embeddings");
const figures = new Figures(
  (backends.length === 1 && backends[0] === "sqlite" ? "devset" : `devset-${backends.join("-")}`) + (splitArg ? `-${splitArg}` : ""),
);
const fullDevset = loadDevset();
// Every case is still published as a trail (a store as large as without the option, so the tune
// figures are those of a full run); only the chosen splits are queried and measured.
const devset = {
  ...fullDevset,
  cases: fullDevset.cases.filter((c) => splits.includes(c.split)),
  negatives: fullDevset.negatives.filter((n) => splits.includes(n.split as Split)),
};
log(`dev set: ${devset.cases.length} cases, ${devset.negatives.length} negatives, ${devset.distractors.length} distractor pairs`);
// Cases that share a report with the external sets normalizer rules were written from: the
// "unseen" lines below leave them out (test/support/devset.ts casesInExternalSets).
const seenElsewhere = casesInExternalSets(fullDevset.cases);
const unseen = (split: Split) => devset.cases.filter((c) => c.split === split && !seenElsewhere.has(c.id));

// ---- Fingerprints ------------------------------------------------------------------------------
const sameFp: Record<string, unknown> = {};
for (const split of splits) {
  let n = 0;
  let same = 0;
  const byClass = new Map<string, [number, number]>();
  // [same fingerprint, variants] per relation (eval/README.md, Variant relations).
  const byRelation = new Map<string, [number, number]>(VARIANT_RELATIONS.map((r) => [r, [0, 0]]));
  for (const c of devset.cases.filter((c) => c.split === split)) {
    const fp = fingerprint(c.error_line);
    for (const q of c.queries.filter((q) => q.kind === "variant")) {
      const ok = fingerprint(q.text) === fp;
      n++;
      if (ok) same++;
      for (const k of q.classes ?? ["unclassified"]) {
        const e = byClass.get(k) ?? [0, 0];
        e[1]++;
        if (ok) e[0]++;
        byClass.set(k, e);
      }
      const r = byRelation.get(q.relation ?? "unlabelled") ?? [0, 0];
      r[1]++;
      if (ok) r[0]++;
      byRelation.set(q.relation ?? "unlabelled", r);
    }
  }
  log(`same fingerprint, ${split}: ${same}/${n} = ${f3(same / n)} (goal on holdout >= 0.90)`);
  log(
    `  per class: ${[...byClass]
      .sort()
      .map(([k, [a, b]]) => `${k} ${a}/${b}`)
      .join(", ")}`,
  );
  const [defSame, defN] = byRelation.get("same")!;
  log(`  same fingerprint on variants issue 16 defines (relation=same): ${defSame}/${defN} = ${f3(defSame / defN)}`);
  log(
    `  per relation: ${[...byRelation].map(([k, [a, b]]) => `${k} ${a}/${b} = ${b ? f3(a / b) : "-"}`).join(", ")} ` +
      "(named should mostly differ: decisions §2 keeps those names)",
  );
  sameFp[split] = {
    variants: n,
    same,
    rate: same / n,
    by_class: Object.fromEntries(byClass),
    relation_same: { variants: defN, same: defSame, rate: defSame / defN },
    by_relation: Object.fromEntries([...byRelation].map(([k, [a, b]]) => [k, { variants: b, same: a, rate: b ? a / b : null }])),
  };
}
// The same, on the cases no external set shares a report with, by this normalizer and the one before.
const sameFpUnseen: Record<string, unknown> = {};
for (const split of splits) {
  const cases = unseen(split);
  const rate = (version: NormalizerVersion) => {
    let n = 0;
    let same = 0;
    let defN = 0;
    let defSame = 0;
    for (const c of cases) {
      const fp = fingerprint(c.error_line, version);
      for (const q of c.queries.filter((q) => q.kind === "variant")) {
        const ok = fingerprint(q.text, version) === fp;
        n++;
        if (ok) same++;
        if (q.relation === "same") {
          defN++;
          if (ok) defSame++;
        }
      }
    }
    return { variants: n, same, rate: same / n, relation_same: { variants: defN, same: defSame, rate: defSame / defN } };
  };
  const versions = [NORMALIZER_VERSION - 1, NORMALIZER_VERSION] as NormalizerVersion[];
  const byVersion = Object.fromEntries(versions.map((v) => [v, rate(v)]));
  const total = devset.cases.filter((c) => c.split === split).length;
  log(
    `same fingerprint, ${split}, the ${cases.length} of ${total} cases no external set shares a report with: ` +
      versions
        .map((v) => {
          const r = byVersion[v]!;
          return `version ${v} ${r.same}/${r.variants} = ${f3(r.rate)} (relation=same ${r.relation_same.same}/${r.relation_same.variants} = ${f3(r.relation_same.rate)})`;
        })
        .join("; "),
  );
  sameFpUnseen[split] = { cases: cases.length, of: total, by_version: byVersion };
}
figures.set("same_fingerprint", sameFp);
figures.set("same_fingerprint_unseen", sameFpUnseen);

const distractorCollisions = devset.distractors.filter((p) => fingerprint(p.a) === fingerprint(p.b)).map((p) => p.id);
// Every error line and variant of every case, against those of every other case whose error_type differs.
const { pairs, collisions, collided } = crossCaseCollisions(devset.cases, fingerprint);
log(
  `collisions: distractor pairs ${distractorCollisions.length}/${devset.distractors.length}; ` +
    `error lines and variants of different cases with another error class or code ${collisions}/${pairs} = ${f3((100 * collisions) / pairs)}% (goal < 0.5%)${collided.size ? ` [${[...collided].join(" ")}]` : ""}`,
);
// The real error strings the distractor trails are made from (every one, not deduplicated by
// fingerprint): pairs whose error class differs, or whose message template differs, that share a
// fingerprint.
const harvested = harvestErrorStrings(REPO_DIR);
const corpus = corpusIdentity(REPO_DIR);
log(corpusLine(corpus));
figures.set("corpus", corpus);
const harvestRand = rng(7);
const harvestLines = harvested.map((e) => ({
  cls: e.cls.toLowerCase(),
  template: `${e.cls}|${e.message}`,
  fp: fingerprint(errorLine(e, harvestRand)),
}));
const pairsDiffering = (key: (l: (typeof harvestLines)[number]) => string) => {
  const counts = new Map<string, number>();
  for (const l of harvestLines) counts.set(key(l), (counts.get(key(l)) ?? 0) + 1);
  let same = 0;
  for (const k of counts.values()) same += (k * (k - 1)) / 2;
  return (harvestLines.length * (harvestLines.length - 1)) / 2 - same;
};
const { otherClass: classCollisions, otherTemplate: templateCollisions } = collisionsAmong(
  harvested,
  harvestLines.map((l) => l.fp),
);
const classPairs = pairsDiffering((l) => l.cls);
const templatePairs = pairsDiffering((l) => l.template);
log(
  `collisions among ${harvestLines.length} real error strings of the distractor corpus: another class ${classCollisions}/${classPairs} = ${((100 * classCollisions) / classPairs).toPrecision(2)}%, ` +
    `another message template ${templateCollisions}/${templatePairs} = ${((100 * templateCollisions) / templatePairs).toPrecision(2)}% (goal < 0.5%)`,
);
figures.set("collisions", {
  distractor_pairs: devset.distractors.length,
  distractor_collisions: distractorCollisions,
  cross_case_pairs: pairs,
  cross_case_collisions: collisions,
  rate: collisions / pairs,
  corpus_strings: harvestLines.length,
  corpus_class_pairs: classPairs,
  corpus_class_collisions: classCollisions,
  corpus_template_pairs: templatePairs,
  corpus_template_collisions: templateCollisions,
});

// ---- Search --------------------------------------------------------------------------------------
const t0 = performance.now();
const distractors = distractorTrails(REPO_DIR, DISTRACTORS, 7);
log(`distractors: ${distractors.length} trails from real error strings (${f1((performance.now() - t0) / 1000)} s to build)`);
/**
 * The embedding-adapter experiment's query-only variant (bench/RESULTS.md "Session 16: a learned
 * linear adapter"): once the trails are embedded, every text the model embeds (the queries) is
 * mapped by the dim×dim matrix in FILE (float32, row-major, v ↦ normalize(v·W)).
 */
function applyQueryAdapter(colony: Awaited<ReturnType<typeof inProcessColony>>, file: string): void {
  const embedder = colony.subsystems.embedder;
  if (!embedder) throw new Error("BENCH_QUERY_ADAPTER: no embedding model");
  const dim = embedder.info.dim;
  const bytes = readFileSync(file);
  const w = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  if (w.length !== dim * dim) throw new Error(`BENCH_QUERY_ADAPTER: ${file} has ${w.length} numbers, not ${dim}×${dim}`);
  const embed = embedder.embed.bind(embedder);
  embedder.embed = async (texts) =>
    (await embed(texts)).map((v) => {
      const out = new Float32Array(dim);
      for (let k = 0; k < dim; k++) {
        const x = v[k]!;
        for (let j = 0; j < dim; j++) out[j]! += x * w[k * dim + j]!;
      }
      const norm = Math.hypot(...out);
      return out.map((x) => x / norm);
    });
  log(`query-only adapter ${file} applied`);
}

/** Every search measure on one backend; the figures by name (the same names for every backend). */
async function measureSearch(backend: Backend): Promise<Record<string, unknown>> {
  const dir = benchDir();
  const colony = await inProcessColony(dir, await backendEnv(backend));
  log(`---- search on ${backend}`);
  try {
    const service = colony.service;
    const caller = DEVSET_CALLER;
    const { published, expected, seeding } = await publishDevset(colony, fullDevset.cases, distractors);
    log(`loaded ${fullDevset.cases.length} cases + ${distractors.length} distractors in ${f1(seeding.totalS)} s`);
    if (process.env.BENCH_QUERY_ADAPTER) applyQueryAdapter(colony, process.env.BENCH_QUERY_ADAPTER);
    // Names that are the same in every run (trail ids are random): the case id, or x and the distractor's number.
    const label = new Map<string, string>([
      ...seeding.ids.map((id, i): [string, string] => [id, `x${i}`]),
      ...published.map((p): [string, string] => [p.id, p.c.id]),
    ]);
    const dumped: string[] = [];
    const featureLines: string[] = [];
    const embeddingChunks: Float32Array[] = [];
    const termDocs = colony.subsystems.db?.query<{ docs: number }, [string]>("SELECT docs FROM lexical_terms WHERE term = ?");
    const documentFrequency = (term: string) => termDocs?.get(term)?.docs ?? 0;
    /** The candidates of one query with both stages' inputs (see `--features`). */
    const candidateFeatures = async (query: string) => {
      const { store, vectors, embedder } = colony.subsystems;
      const [embedding] = await embedder!.embed([query]);
      const lexical = await store!.lexical.search(lexicalIndexTokens(query), CANDIDATES_PER_RETRIEVER);
      const vector = await vectors!.search(embedding!, CANDIDATES_PER_RETRIEVER);
      const ids = [...new Set([...lexical.map((h) => h.id), ...vector.map((h) => h.id)])];
      const similarity = new Map(vector.map((h) => [h.id, h.similarity]));
      for (const [id, sim] of await vectors!.similarities(
        embedding!,
        ids.filter((id) => !similarity.has(id)),
      ))
        similarity.set(id, sim);
      const best = lexical.reduce((m, h) => Math.max(m, h.score), 0);
      const lexicalScore = new Map(lexical.map((h) => [h.id, best > 0 ? h.score / best : 0]));
      const words = queryWords(query);
      const records = await store!.trails.bySeqs(ids);
      const documents = (r: (typeof records)[number]) => {
        const fields = lexicalFields(r.trail);
        return new Set(`${fields.error} ${fields.body}`.split(" "));
      };
      const indexed = records.filter((r) => r.status === "indexed");
      if (embeddingsFile) {
        const vectors = await embedder!.embed(indexed.map((r) => embeddingText(r.trail)));
        for (const v of [embedding!, ...vectors]) embeddingChunks.push(new Float32Array(v));
      }
      return indexed.map((r) => ({
        id: label.get(r.id) ?? r.id,
        seq: r.seq,
        lex: lexicalScore.get(r.seq) ?? null,
        cos: similarity.get(r.seq) ?? null,
        cov: coverageOf(words, `${r.trail.problem.error}\n${r.trail.problem.root_cause ?? ""}`, embedder?.wordNeighbours),
        strength: r.strength ?? 0,
        // The query's words in the trail's error and root cause, and in its whole lexical document.
        inErrorCause: [...queryWords(`${r.trail.problem.error}\n${r.trail.problem.root_cause ?? ""}`)].filter((w) => words.has(w)),
        inDocument: [...documents(r)].filter((w) => words.has(w)),
        // The query's words in the trail's error alone and its root cause alone (field-aware matches, session 18).
        inError: [...queryWords(r.trail.problem.error)].filter((w) => words.has(w)),
        inCause: [...queryWords(r.trail.problem.root_cause ?? "")].filter((w) => words.has(w)),
        // How many distinct words the trail's error and root cause have (a length-normalized coverage).
        errorCauseWords: queryWords(`${r.trail.problem.error}\n${r.trail.problem.root_cause ?? ""}`).size,
      }));
    };

    interface Row {
      split: Split;
      /** The case a query belongs to (null for a negative). */
      caseId: string | null;
      kind: QueryKind | "negative";
      rank: number | null;
      via: string | null;
      cosine: number | null;
      coverage: number | null;
      confidence: Confidence | null;
      correct: boolean;
    }
    const rows: Row[] = [];
    const ms: number[] = [];
    const run = async (query: string, split: Split, kind: Row["kind"], want: string | null, name: string) => {
      const s0 = performance.now();
      const env = await service.search.search({ query, limit: 5 }, caller);
      ms.push(performance.now() - s0);
      const idx = want === null ? -1 : env.results.findIndex((r) => r.trail_id === want);
      const top = env.results[0];
      rows.push({
        split,
        caseId: kind === "negative" ? null : name.split("#")[0]!,
        kind,
        rank: idx >= 0 ? idx + 1 : null,
        via: top?.match.via ?? null,
        cosine: top?.match.score ?? null,
        coverage: top
          ? lexicalCoverage(
              query,
              `${top.trail.problem.error}\n${top.trail.problem.root_cause ?? ""}`,
              colony.subsystems.embedder?.wordNeighbours,
            )
          : null,
        confidence: top?.match.confidence ?? null,
        correct: idx === 0,
      });
      if (featuresFile) {
        const fingerprinted = env.results.filter((r) => r.match.via === "fingerprint").map((r) => label.get(r.trail_id) ?? r.trail_id);
        featureLines.push(
          JSON.stringify({
            query: name,
            kind,
            want: want === null ? null : label.get(want),
            rank: idx >= 0 ? idx + 1 : null,
            fingerprinted,
            // Each query word's document frequency among the store's trails (its lexical tokens).
            words: Object.fromEntries([...queryWords(query)].map((w) => [w, documentFrequency(w)])),
            trails: fullDevset.cases.length + distractors.length,
            candidates: await candidateFeatures(query),
          }),
        );
      }
      if (dumpFile) {
        const top3 = env.results
          .slice(0, 3)
          .map((r) => [label.get(r.trail_id) ?? r.trail_id, r.match.via, r.match.score, r.match.confidence]);
        dumped.push(JSON.stringify({ query: name, kind, rank: idx >= 0 ? idx + 1 : null, top3 }));
      }
    };
    for (const p of published.filter((p) => splits.includes(p.c.split))) {
      for (const [i, q] of p.c.queries.entries()) await run(q.text, p.c.split, q.kind, expected.get(p.c.id)!, `${p.c.id}#${i}`);
    }
    for (const n of devset.negatives) await run(n.text, n.split as Split, "negative", null, n.id);
    if (dumpFile) {
      const file = backends.length > 1 ? `${dumpFile}.${backend}` : dumpFile;
      writeFileSync(file, `${dumped.join("\n")}\n`);
      log(`per-query results written to ${file}`);
    }
    if (featuresFile) {
      writeFileSync(backends.length > 1 ? `${featuresFile}.${backend}` : featuresFile, `${featureLines.join("\n")}\n`);
      log(`candidates' features written to ${featuresFile}`);
    }
    if (embeddingsFile) {
      writeFileSync(embeddingsFile, Buffer.concat(embeddingChunks.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength))));
      log(`query and candidate embeddings written to ${embeddingsFile}`);
    }
    log(
      `searches: ${ms.length}, p50 ${f1(percentile(ms, 50))} ms, p95 ${f1(percentile(ms, 95))} ms (among ${fullDevset.cases.length + distractors.length} trails)`,
    );

    const recall: Record<string, unknown> = {};
    for (const split of splits) {
      for (const kind of QUERY_KINDS) {
        const rs = rows.filter((r) => r.split === split && r.kind === kind);
        const at = (k: number) => rs.filter((r) => r.rank !== null && r.rank <= k).length / rs.length;
        recall[`${split}.${kind}`] = { n: rs.length, r1: at(1), r3: at(3) };
        log(`  ${split.padEnd(8)} ${kind.padEnd(11)} n=${String(rs.length).padStart(4)}  R@1 ${f3(at(1))}  R@3 ${f3(at(3))}`);
        const us = rs.filter((r) => r.caseId !== null && !seenElsewhere.has(r.caseId));
        const uat = (k: number) => us.filter((r) => r.rank !== null && r.rank <= k).length / us.length;
        recall[`${split}.${kind}.unseen`] = { n: us.length, r1: uat(1), r3: uat(3) };
        log(
          `  ${split.padEnd(8)} ${kind.padEnd(11)} n=${String(us.length).padStart(4)}  R@1 ${f3(uat(1))}  R@3 ${f3(uat(3))}  (cases no external set shares a report with)`,
        );
      }
      const negs = rows.filter((r) => r.split === split && r.kind === "negative");
      const weak = negs.filter((r) => r.confidence === null || r.confidence === "weak").length;
      recall[`${split}.negatives_weak`] = { n: negs.length, weak, rate: weak / negs.length };
      log(`  ${split.padEnd(8)} negatives rated weak ${weak}/${negs.length} = ${f3(weak / negs.length)} (goal >= 0.8)`);
      // How often each confidence level of a top result is right (a negative's top is never right).
      const levels: Record<string, unknown> = {};
      for (const level of ["strong", "likely", "weak"] as const) {
        const rs = rows.filter((r) => r.split === split && r.confidence === level);
        const right = rs.filter((r) => r.correct).length;
        levels[level] = { n: rs.length, right, precision: rs.length ? right / rs.length : null };
        log(`  ${split.padEnd(8)} top result ${level.padEnd(6)} right ${right}/${rs.length} = ${rs.length ? f3(right / rs.length) : "-"}`);
      }
      recall[`${split}.confidence`] = levels;
    }

    // Calibration grid (semantic top results of the tune split, negatives included): precision and
    // share of right answers kept, for rules "cosine >= c and coverage >= v".
    const semantic = (split: Split) => rows.filter((r) => r.split === split && r.via === "semantic");
    const grid: unknown[] = [];
    const withHoldout = splits.includes("holdout");
    log(`calibration grid, semantic top results (precision / recall of right answers), tune${withHoldout ? " | holdout" : ""}:`);
    for (const c of [0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8]) {
      const cells: string[] = [];
      for (const v of [0, 0.3, 0.5, 0.6, 0.7, 0.8]) {
        const cell = (split: Split) => {
          const rs = semantic(split);
          const kept = rs.filter((r) => r.cosine! >= c && r.coverage! >= v);
          const right = kept.filter((r) => r.correct).length;
          const allRight = rs.filter((r) => r.correct).length;
          return { n: kept.length, precision: kept.length ? right / kept.length : 1, recall: allRight ? right / allRight : 0 };
        };
        const t = cell("tune");
        const h = withHoldout ? cell("holdout") : null;
        grid.push({ cosine: c, coverage: v, tune: t, ...(h ? { holdout: h } : {}) });
        cells.push(`${v.toFixed(1)}:${f3(t.precision)}/${f3(t.recall)}${h ? `|${f3(h.precision)}` : ""}`);
      }
      log(`  cos>=${c.toFixed(2)}  ${cells.join("  ")}`);
    }
    recall.calibration_grid = grid;
    const negatives = rows.filter((r) => r.kind === "negative");
    log(
      `negatives' top results (cosine/coverage): ${negatives.map((r) => `${r.split[0]}:${r.cosine === null ? "-" : f3(r.cosine)}/${r.coverage === null ? "-" : f3(r.coverage)}`).join(" ")}`,
    );
    // Wrong semantic top results of real queries: how sure they looked.
    const wrongTop = rows.filter((r) => r.kind !== "negative" && r.via === "semantic" && !r.correct);
    log(
      `wrong semantic top results: n=${wrongTop.length}, cosine p50 ${f3(
        percentile(
          wrongTop.map((r) => r.cosine!),
          50,
        ),
      )}, p90 ${f3(
        percentile(
          wrongTop.map((r) => r.cosine!),
          90,
        ),
      )}`,
    );
    // Sanity: the production rule applied to the recorded features gives the recorded level.
    const mismatch = rows.filter(
      (r) => r.via === "semantic" && confidenceOf({ via: "semantic", cosine: r.cosine!, coverage: r.coverage! }) !== r.confidence,
    );
    log(`confidence recomputed from the recorded features differs on ${mismatch.length} rows`);
    return recall;
  } finally {
    await colony.stop();
    removeDir(dir);
  }
}

const searchBy: Partial<Record<Backend, Record<string, unknown>>> = {};
try {
  for (const backend of backends) searchBy[backend] = await measureSearch(backend);
} finally {
  await stopBackends();
}
figures.set("search", backends.length === 1 ? searchBy[backends[0]!] : searchBy);

// ---- Side by side --------------------------------------------------------------------------------
if (searchBy.sqlite && searchBy.postgres) {
  const measures = (s: Record<string, any>, split: Split): [string, number | null][] => [
    ...QUERY_KINDS.flatMap((kind): [string, number][] => [
      [`${kind} R@1`, s[`${split}.${kind}`].r1],
      [`${kind} R@3`, s[`${split}.${kind}`].r3],
    ]),
    ["negatives weak", s[`${split}.negatives_weak`].rate],
    ["strong is right", s[`${split}.confidence`].strong.precision],
    ["likely is right", s[`${split}.confidence`].likely.precision],
  ];
  const rows: unknown[] = [];
  let worst = 0;
  log("side by side (SQLite | PostgreSQL | difference):");
  for (const split of splits) {
    log(
      `  ${split}: same fingerprint ${f3((sameFp[split] as { rate: number }).rate)} on both (the fingerprint does not depend on the store)`,
    );
    const pg = new Map(measures(searchBy.postgres as Record<string, any>, split));
    for (const [name, lite] of measures(searchBy.sqlite as Record<string, any>, split)) {
      const other = pg.get(name) ?? null;
      const diff = lite === null || other === null ? null : other - lite;
      if (diff !== null) worst = Math.max(worst, Math.abs(diff));
      rows.push({ split, measure: name, sqlite: lite, postgres: other, difference: diff });
      log(
        `  ${split.padEnd(8)} ${name.padEnd(16)} ${lite === null ? "    -" : f3(lite)} | ${other === null ? "    -" : f3(other)} | ${diff === null ? "-" : (diff >= 0 ? "+" : "") + f3(diff)}`,
      );
    }
  }
  log(
    `  collisions: ${f3((100 * collisions) / pairs)}% on both; largest difference ${f3(worst)} (goal <= 0.02: ${worst <= 0.02 ? "met" : "MISSED"})`,
  );
  figures.set("side_by_side", { rows, largest_difference: worst });
}
figures.write();
