// Offline experiment (issue 16, session 9): two untried levers for paraphrase and related queries,
// measured on the dev set's tune split only (never the holdout), among 5,000 real-error distractors.
//
// A. A learned second stage. For every tune query the production first stage (fingerprint matches,
//    lexical top 30 + vector top 30, score blend) is reproduced and the blend's best DEPTH
//    candidates get query-time features (below). A pairwise logistic model (and a small pairwise
//    boosted-stump model) is fitted with 5-fold cross-validation by case; every fold's held-out
//    queries are ranked by the model fitted on the other folds and compared with the hand-set
//    stage (src/core/ranking.ts rerank) on the same queries.
// B. Pseudo-relevance feedback on the first stage: RM3-style expansion of the lexical query with
//    the best terms of the top-k first-stage trails (BM25 computed here exactly as core/bm25.ts,
//    with weighted terms), and Rocchio on the vector side (the query vector moved toward the mean
//    of the top-k trails' vectors); each followed by the production second stage.
//
// Figures and verdict (neither adopted): bench/RESULTS.md, Session 9.
// Run: node_modules/.bin/bun bench/retrieval-rerank.ts   (writes bench/out/retrieval-rerank-tune.json)
//      node_modules/.bin/bun bench/retrieval-rerank.ts --reuse   (fits again from that dump)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bm25Idf, BM25_B, BM25_K1, FIELD_WEIGHTS } from "../src/core/bm25";
import { coverageOf, queryWords } from "../src/core/confidence";
import { lexicalFields } from "../src/core/enrichment";
import { fingerprint } from "../src/core/fingerprint";
import { lexicalTokens, selectQueryTerms } from "../src/core/lexical";
import { type Candidate, rankByBlend, RERANK_DEPTH, rerank, VECTOR_WEIGHT_BY_MODEL } from "../src/core/ranking";
import type { TrailRecord } from "../src/store/ports";
import { loadDevset } from "../test/support/devset";
import { benchDir, inProcessColony, removeDir } from "./lib/colony";
import { publishDevset } from "./lib/devset-colony";
import { distractorTrails } from "./lib/corpus";
import { OUT_DIR, REPO_DIR, rng, shuffle } from "./lib/report";

const SPLIT = "tune";
const K = 30;
const DEPTH = 30;
const DUMP = join(OUT_DIR, `retrieval-rerank-${SPLIT}.json`);

const FEATURES = [
  "blend",
  "blendRank",
  "lex",
  "lexRank",
  "cos",
  "vecRank",
  "cov",
  "covErr",
  "covRc",
  "covBody",
  "idfCov",
  "idfCovAll",
  "prec",
  "idfPrec",
  "idMatch",
  "idMiss",
  "typeMatch",
  "typeMiss",
  "strength",
] as const;
type Row = { id: number; fp: boolean; f: number[] };
interface QueryDump {
  caseId: string;
  kind: string;
  want: number;
  fpIds: number[];
  /** First stage order (blend), fingerprint matches excluded; features of the first DEPTH. */
  cands: Row[];
  /** PRF variants: the production second stage's top 5 (after fingerprint matches) per setting. */
  prf: Record<string, number[]>;
  text: string;
  /** Error line and root cause of the expected trail and of the hand-set stage's top 3 (for reading misses). */
  errors: Record<number, string>;
}

/** Words that name something exactly: codes, identifiers, modules (EACCES, E0382, ERR_REQUIRE_ESM, distutils.util). */
function identifierTokens(query: string): Set<string> {
  const out = new Set<string>();
  for (const m of query.normalize("NFKC").matchAll(/[\p{L}\p{N}_][\p{L}\p{N}_.-]*[\p{L}\p{N}_]/gu)) {
    const w = m[0];
    if (/[0-9_]|[a-z][A-Z]|^[A-Z]{3,}$|[a-z]\.[a-z]/.test(w)) {
      const whole = lexicalTokens(w)[0];
      if (whole) out.add(whole);
    }
  }
  return out;
}

const ERROR_WORD = /^\w*(error|exception|errno)$/;

async function dump(): Promise<QueryDump[]> {
  const devset = loadDevset();
  const dir = benchDir();
  const colony = await inProcessColony(dir);
  try {
    const { store, vectors, embedder, db } = colony.subsystems;
    const { published, expected } = await publishDevset(colony, devset.cases, distractorTrails(REPO_DIR, 5000, 7));
    // Every indexed trail in memory: its lexical document (for BM25 with weighted terms), its vector.
    const recs = new Map<number, TrailRecord>();
    for (let after = 0; ; ) {
      const batch = await store!.trails.indexedAfter(after, 1000);
      if (batch.length === 0) break;
      for (const r of batch) recs.set(r.seq, r);
      after = batch[batch.length - 1]!.seq;
    }
    const df = new Map<string, number>();
    const docTf = new Map<number, Map<string, number>>();
    const docLen = new Map<number, number>();
    const postings = new Map<string, number[]>();
    let tokens = 0;
    for (const [seq, r] of recs) {
      const f = lexicalFields(r.trail);
      const tf = new Map<string, number>();
      const e = f.error.split(" ").filter(Boolean);
      const b = f.body.split(" ").filter(Boolean);
      for (const t of e) tf.set(t, (tf.get(t) ?? 0) + FIELD_WEIGHTS.error);
      for (const t of b) tf.set(t, (tf.get(t) ?? 0) + FIELD_WEIGHTS.body);
      docTf.set(seq, tf);
      docLen.set(seq, e.length + b.length);
      tokens += e.length + b.length;
      for (const t of tf.keys()) {
        df.set(t, (df.get(t) ?? 0) + 1);
        (postings.get(t) ?? postings.set(t, []).get(t)!).push(seq);
      }
    }
    const N = recs.size;
    const avgdl = tokens / N;
    const idf = (t: string) => bm25Idf(N, df.get(t) ?? 0);
    /** BM25 over weighted terms (each term's contribution times its weight), best k. */
    const bm25 = (weights: Map<string, number>, k: number) => {
      const scores = new Map<number, number>();
      for (const [t, w] of weights) {
        const i = idf(t);
        for (const seq of postings.get(t) ?? []) {
          const f = docTf.get(seq)!.get(t)!;
          const s = i * ((f * (BM25_K1 + 1)) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * docLen.get(seq)!) / avgdl)));
          scores.set(seq, (scores.get(seq) ?? 0) + w * s);
        }
      }
      return [...scores]
        .map(([id, score]) => ({ id, score }))
        .sort((a, b) => b.score - a.score || a.id - b.id)
        .slice(0, k);
    };
    const vecOf = new Map<number, Float32Array>();
    for (const row of db!.query<{ rowid: number; embedding: Uint8Array }, []>("SELECT rowid, embedding FROM vec_float").all()) {
      vecOf.set(row.rowid, new Float32Array(row.embedding.slice().buffer));
    }
    const dot = (a: Float32Array, b: Float32Array) => {
      let s = 0;
      for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
      return s;
    };
    const norm = (a: Float32Array) => Math.sqrt(dot(a, a));
    const vectorSearch = (q: Float32Array, k: number) => {
      const nq = norm(q);
      const hits: { id: number; similarity: number }[] = [];
      for (const [id, v] of vecOf) hits.push({ id, similarity: dot(q, v) / (nq * norm(v)) });
      return hits.sort((a, b) => b.similarity - a.similarity || a.id - b.id).slice(0, k);
    };
    const cosine = (q: Float32Array, id: number) => {
      const v = vecOf.get(id);
      return v ? dot(q, v) / (norm(q) * norm(v)) : 0;
    };
    const weights = { lexical: 1, vector: VECTOR_WEIGHT_BY_MODEL.static };
    const rcText = (r: TrailRecord) => `${r.trail.problem.error}\n${r.trail.problem.root_cause ?? ""}`;

    /** The production first stage from given lexical and vector hits; fingerprint matches excluded. */
    const firstStage = (
      lexical: { id: number; score: number }[],
      vector: { id: number; similarity: number }[],
      q: Float32Array,
      fpIds: Set<number>,
    ) => {
      const ids = [...new Set([...lexical.map((h) => h.id), ...vector.map((h) => h.id)])].filter((id) => !fpIds.has(id));
      const best = lexical.reduce((m, h) => Math.max(m, h.score), 0);
      const lexRank = new Map(lexical.map((h, i) => [h.id, i]));
      const lexScore = new Map(lexical.map((h) => [h.id, best > 0 ? h.score / best : 0]));
      const vecRank = new Map(vector.map((h, i) => [h.id, i]));
      const cands: Candidate[] = ids
        .filter((id) => recs.has(id))
        .map((id) => ({
          id,
          lexicalRank: lexRank.get(id),
          vectorRank: vecRank.get(id),
          lexicalScore: lexScore.get(id),
          similarity: cosine(q, id),
          strength: recs.get(id)!.strength ?? 0,
          overlap: 0,
        }));
      return rankByBlend(cands, weights);
    };
    const secondStage = (ranked: Candidate[], words: Set<string>) => {
      const short = ranked.slice(0, RERANK_DEPTH).map((c) => ({ ...c, coverage: coverageOf(words, rcText(recs.get(c.id)!)) }));
      return rerank(short).map((c) => c.id);
    };

    const seqOf = new Map<string, number>();
    for (const p of published) seqOf.set(p.c.id, (await store!.trails.byId(expected.get(p.c.id)!))!.seq);
    const out: QueryDump[] = [];
    const PRF_SETTINGS: { name: string; lexK: number; lexTerms: number; lexBeta: number; vecK: number; vecBeta: number }[] = [
      { name: "none", lexK: 0, lexTerms: 0, lexBeta: 0, vecK: 0, vecBeta: 0 },
      ...[1, 3, 5].flatMap((k) =>
        [5, 10].flatMap((terms) =>
          [0.2, 0.5].map((beta) => ({
            name: `rm3 k${k} t${terms} b${beta}`,
            lexK: k,
            lexTerms: terms,
            lexBeta: beta,
            vecK: 0,
            vecBeta: 0,
          })),
        ),
      ),
      ...[1, 3, 5, 10].flatMap((k) =>
        [0.25, 1].map((beta) => ({ name: `rocchio k${k} b${beta}`, lexK: 0, lexTerms: 0, lexBeta: 0, vecK: k, vecBeta: beta })),
      ),
      // The moved vector's cosine also scores every candidate (first and second stage).
      ...[1, 3, 5].flatMap((k) =>
        [0.1, 0.25, 0.5].map((beta) => ({
          name: `rocchio-scored k${k} b${beta}`,
          lexK: 0,
          lexTerms: 0,
          lexBeta: 0,
          vecK: k,
          vecBeta: beta,
        })),
      ),
      { name: "both k3 t10 b0.2 / k3 b0.25", lexK: 3, lexTerms: 10, lexBeta: 0.2, vecK: 3, vecBeta: 0.25 },
    ];
    let checked = 0;
    let agree = 0;
    for (const p of published.filter((p) => p.c.split === SPLIT)) {
      const want = seqOf.get(p.c.id)!;
      for (const q of p.c.queries) {
        const fpIds = (await store!.trails.indexedByFingerprint(fingerprint(q.text), 5)).map((r) => r.seq);
        const fpSet = new Set(fpIds);
        const [qv] = await embedder!.embed([q.text]);
        const qTokens = lexicalTokens(q.text);
        const lexical = await store!.lexical.search(qTokens, K);
        const vector = await vectors!.search(qv!, K);
        // The in-memory BM25 must rank as the store does (a check on the PRF runs' baseline).
        const distinct = [...new Set(qTokens)];
        const terms = selectQueryTerms(distinct, df, N);
        const mine = bm25(new Map(terms.map((t) => [t, 1])), K);
        checked++;
        if (mine.length === lexical.length && mine.every((h, i) => h.id === lexical[i]!.id)) agree++;
        const ranked = firstStage(lexical, vector, qv!, fpSet);
        const words = queryWords(q.text);
        const ids = new Set(qTokens);
        const idTokens = identifierTokens(q.text);
        const queryErrorWords = [...ids].filter((t) => ERROR_WORD.test(t));
        const idfSum = (ts: Iterable<string>) => {
          let s = 0;
          for (const t of ts) s += idf(t);
          return s;
        };
        const qIdf = idfSum(words);
        const cands: Row[] = ranked.slice(0, DEPTH).map((c, i) => {
          const r = recs.get(c.id)!;
          const pr = r.trail.problem;
          const errTokens = new Set(lexicalTokens(`${pr.error_type ?? ""} ${pr.error}`));
          const rcTokens = new Set(lexicalTokens(pr.root_cause ?? ""));
          const both = new Set([...errTokens, ...rcTokens]);
          const body = new Set(lexicalFields(r.trail).body.split(" ").filter(Boolean));
          const all = new Set([...errTokens, ...body]);
          const hit = (set: Set<string>) => [...words].filter((w) => set.has(w));
          const errHits = [...errTokens].filter((t) => ids.has(t));
          const type = pr.error_type ? lexicalTokens(pr.error_type)[0] : undefined;
          const typeMatch = type !== undefined && ids.has(type) ? 1 : 0;
          const typeMiss = type !== undefined && !typeMatch && queryErrorWords.length > 0 ? 1 : 0;
          const idHits = [...idTokens].filter((t) => both.has(t)).length;
          const f = [
            0, // the blend, below
            i / DEPTH,
            c.lexicalScore ?? 0,
            (c.lexicalRank ?? K) / K,
            c.similarity ?? 0,
            (c.vectorRank ?? K) / K,
            coverageOf(words, rcText(r)),
            words.size ? hit(errTokens).length / words.size : 0,
            words.size ? hit(rcTokens).length / words.size : 0,
            words.size ? hit(body).length / words.size : 0,
            qIdf ? idfSum(hit(both)) / qIdf : 0,
            qIdf ? idfSum(hit(all)) / qIdf : 0,
            errTokens.size ? errHits.length / errTokens.size : 0,
            errTokens.size ? idfSum(errHits) / idfSum(errTokens) : 0,
            idTokens.size ? idHits / idTokens.size : 0,
            idTokens.size ? 1 - idHits / idTokens.size : 0,
            typeMatch,
            typeMiss,
            r.strength ?? 0,
          ];
          f[0] = (c.lexicalScore ?? 0) + weights.vector * (c.similarity ?? 0);
          return { id: c.id, fp: false, f };
        });
        // PRF variants.
        const prf: Record<string, number[]> = {};
        const topIds = (ranked: Candidate[]) => secondStage(ranked, words).slice(0, 5);
        for (const s of PRF_SETTINGS) {
          if (s.name === "none") {
            prf[s.name] = topIds(ranked);
            continue;
          }
          // Feedback documents: the production answer's top k (second stage included).
          const fb = secondStage(ranked, words);
          let lex = lexical;
          if (s.lexK > 0) {
            // RM3: the feedback documents' term distribution (each document's tf share, weighted by
            // its normalized blend position 1/(rank+1)), times idf so that common words stay out;
            // the best `lexTerms` new terms join the original ones, which keep weight 1 - beta.
            const dist = new Map<string, number>();
            fb.slice(0, s.lexK).forEach((id, rank) => {
              const tf = docTf.get(id)!;
              let total = 0;
              for (const v of tf.values()) total += v;
              for (const [t, v] of tf) dist.set(t, (dist.get(t) ?? 0) + ((v / total) * idf(t)) / (rank + 1));
            });
            const orig = new Set(terms);
            const extra = [...dist]
              .filter(([t]) => !orig.has(t) && (df.get(t) ?? 0) <= N * 0.02)
              .sort((a, b) => b[1] - a[1])
              .slice(0, s.lexTerms);
            const mass = extra.reduce((m, [, v]) => m + v, 0) || 1;
            const w = new Map<string, number>(terms.map((t) => [t, (1 - s.lexBeta) / Math.max(1, terms.length)] as [string, number]));
            for (const [t, v] of extra) w.set(t, (w.get(t) ?? 0) + (s.lexBeta * v) / mass);
            lex = bm25(w, K);
          }
          let qvec = qv!;
          let vec = vector;
          if (s.vecK > 0) {
            const moved = new Float32Array(qvec.length);
            const nq = norm(qvec);
            for (let i = 0; i < moved.length; i++) moved[i] = qvec[i]! / nq;
            for (const id of fb.slice(0, s.vecK)) {
              const v = vecOf.get(id)!;
              const nv = norm(v);
              for (let i = 0; i < moved.length; i++) moved[i]! += (s.vecBeta / s.vecK) * (v[i]! / nv);
            }
            qvec = moved;
            vec = vectorSearch(qvec, K);
          }
          // Plain Rocchio and RM3: the blend uses the original query's cosine for every candidate
          // (the reported score); the moved vector only changes which trails the vector retriever
          // brings. "rocchio-scored": the moved vector's cosine ranks them too.
          prf[s.name] = topIds(firstStage(lex, vec, s.name.startsWith("rocchio-scored") ? qvec : qv!, fpSet));
        }
        const errors: Record<number, string> = {};
        for (const id of [want, ...prf.none!.slice(0, 3)]) {
          const r = recs.get(id);
          if (r)
            errors[id] = `${r.trail.problem.error.slice(0, 160)} || ${(r.trail.problem.root_cause ?? "").slice(0, 160)}`.replace(
              /\n/g,
              " ",
            );
        }
        out.push({ caseId: p.c.id, kind: q.kind, want, fpIds, cands, prf, text: q.text, errors });
      }
    }
    console.log(`in-memory BM25 ranks as the store does on ${agree}/${checked} queries`);
    return out;
  } finally {
    await colony.stop();
    removeDir(dir);
  }
}

// ---- Evaluation -----------------------------------------------------------------------------------
const KINDS = ["variant", "paraphrase", "related"] as const;
type Hits = Record<string, { n: number; r1: number; r3: number }>;
const emptyHits = (): Hits => Object.fromEntries(KINDS.map((k) => [k, { n: 0, r1: 0, r3: 0 }]));
function count(h: Hits, kind: string, order: number[], want: number) {
  const i = order.indexOf(want);
  const e = h[kind]!;
  e.n++;
  if (i === 0) e.r1++;
  if (i >= 0 && i < 3) e.r3++;
}
const fmt = (h: Hits) => KINDS.map((k) => `${k} ${(h[k]!.r1 / h[k]!.n).toFixed(3)}/${(h[k]!.r3 / h[k]!.n).toFixed(3)}`).join("  ");

const FI = Object.fromEntries(FEATURES.map((f, i) => [f, i])) as Record<(typeof FEATURES)[number], number>;
/** The hand-set stage (RERANK_WEIGHTS) from the dumped features: top RERANK_DEPTH re-ordered. */
function handSet(q: QueryDump): number[] {
  const score = (r: Row) => 0.25 * r.f[FI.lex]! + r.f[FI.cos]! + r.f[FI.cov]! + 0.0005 * r.f[FI.strength]!;
  const top = q.cands.slice(0, RERANK_DEPTH).map((r, i) => ({ r, s: score(r), i }));
  top.sort((a, b) => b.s - a.s || a.r.id - b.r.id);
  return [...q.fpIds, ...top.map((x) => x.r.id), ...q.cands.slice(RERANK_DEPTH).map((r) => r.id)];
}

type Model = (f: number[]) => number;
function orderBy(q: QueryDump, model: Model, depth: number): number[] {
  const top = q.cands.slice(0, depth).map((r) => ({ r, s: model(r.f) }));
  top.sort((a, b) => b.s - a.s || a.r.id - b.r.id);
  return [...q.fpIds, ...top.map((x) => x.r.id), ...q.cands.slice(depth).map((r) => r.id)];
}

/** Pairwise training pairs: (relevant, other) within each query's first `depth`, the relevant one there. */
function pairs(qs: QueryDump[], depth: number, use: number[]) {
  const out: { d: number[]; w: number }[] = [];
  for (const q of qs) {
    const top = q.cands.slice(0, depth);
    const pos = top.find((r) => r.id === q.want);
    if (!pos) continue;
    const negs = top.filter((r) => r.id !== q.want);
    // Each query weighs 1 in all, whatever its number of pairs; paraphrase and related count double
    // (they are what the second stage is for; variants mostly end at the fingerprint).
    const wq = (q.kind === "variant" ? 1 : 2) / Math.max(1, negs.length);
    for (const n of negs) out.push({ d: use.map((j) => pos.f[j]! - n.f[j]!), w: wq });
  }
  return out;
}

/** Pairwise logistic regression without intercept, L2, by Newton's method (a few features). */
function fitLogistic(ps: { d: number[]; w: number }[], dim: number, l2: number): number[] {
  let w = new Array(dim).fill(0);
  for (let it = 0; it < 25; it++) {
    const g = new Array(dim).fill(0);
    const H = Array.from({ length: dim }, () => new Array(dim).fill(0));
    for (let j = 0; j < dim; j++) {
      g[j] = l2 * w[j];
      H[j]![j] = l2;
    }
    for (const { d, w: pw } of ps) {
      let z = 0;
      for (let j = 0; j < dim; j++) z += w[j] * d[j]!;
      const p = 1 / (1 + Math.exp(-z));
      for (let j = 0; j < dim; j++) {
        g[j] += pw * (p - 1) * d[j]!;
        for (let k = 0; k < dim; k++) H[j]![k] += pw * p * (1 - p) * d[j]! * d[k]!;
      }
    }
    const step = solve(H, g);
    w = w.map((x, j) => x - step[j]!);
    if (Math.max(...step.map(Math.abs)) < 1e-8) break;
  }
  return w;
}
function solve(A: number[][], b: number[]): number[] {
  const n = b.length;
  const M = A.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    [M[c], M[p]] = [M[p]!, M[c]!];
    const pv = M[c]![c]! || 1e-12;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const k = M[r]![c]! / pv;
      for (let j = c; j <= n; j++) M[r]![j]! -= k * M[c]![j]!;
    }
  }
  return M.map((row, i) => row[n]! / (row[i]! || 1e-12));
}

/** Boosted stumps on pairwise logistic loss (RankNet gradients): a small non-linear comparison. */
function fitStumps(qs: QueryDump[], depth: number, use: number[], rounds: number, rate: number) {
  type Stump = { j: number; t: number; lo: number; hi: number };
  const stumps: Stump[] = [];
  const model = (f: number[]) => stumps.reduce((s, st) => s + (f[st.j]! <= st.t ? st.lo : st.hi), 0);
  const train = qs
    .map((q) => ({ q, top: q.cands.slice(0, depth) }))
    .filter(({ q, top }) => top.some((r) => r.id === q.want))
    .map(({ q, top }) => ({
      w: q.kind === "variant" ? 1 : 2,
      pos: top.find((r) => r.id === q.want)!,
      negs: top.filter((r) => r.id !== q.want),
      all: top,
    }));
  const thresholds = use.map((j) => {
    const vs = [...new Set(train.flatMap((t) => t.all.map((r) => r.f[j]!)))].sort((a, b) => a - b);
    const qs: number[] = [];
    for (let k = 1; k < 16; k++) qs.push(vs[Math.floor((k * vs.length) / 16)]!);
    return [...new Set(qs)];
  });
  for (let round = 0; round < rounds; round++) {
    // Gradient and Hessian of the pairwise loss per document, then the stump that best fits them
    // (Newton leaf values, as LambdaMART / XGBoost do).
    const grads: { f: number[]; g: number; h: number }[] = [];
    for (const t of train) {
      const sp = model(t.pos.f);
      let gp = 0;
      let hp = 0;
      for (const n of t.negs) {
        const pw = t.w / t.negs.length;
        const p = 1 / (1 + Math.exp(sp - model(n.f)));
        gp += pw * p;
        hp += pw * p * (1 - p);
        grads.push({ f: n.f, g: -pw * p, h: pw * p * (1 - p) });
      }
      grads.push({ f: t.pos.f, g: gp, h: hp });
    }
    let best: Stump | null = null;
    let bestGain = 0;
    const LAMBDA = 1;
    use.forEach((j, ji) => {
      for (const t of thresholds[ji]!) {
        let sl = 0;
        let hl = 0;
        let sr = 0;
        let hr = 0;
        for (const { f, g, h } of grads) {
          if (f[j]! <= t) {
            sl += g;
            hl += h;
          } else {
            sr += g;
            hr += h;
          }
        }
        const gain = (sl * sl) / (hl + LAMBDA) + (sr * sr) / (hr + LAMBDA);
        if (gain > bestGain) {
          bestGain = gain;
          best = { j, t, lo: (rate * sl) / (hl + LAMBDA), hi: (rate * sr) / (hr + LAMBDA) };
        }
      }
    });
    if (!best) break;
    stumps.push(best);
  }
  return model;
}

/** The hand-set stage's paraphrase and related misses whose trail was in the first stage's 10 best. */
function misses(data: QueryDump[]) {
  for (const q of data.filter((q) => q.kind !== "variant")) {
    const order = handSet(q);
    const i = order.indexOf(q.want);
    if (i === 0) continue;
    const f = (id: number) => {
      const r = q.cands.find((c) => c.id === id);
      return r ? `lex ${r.f[FI.lex]!.toFixed(2)} cos ${r.f[FI.cos]!.toFixed(2)} cov ${r.f[FI.cov]!.toFixed(2)}` : "-";
    };
    console.log(`--- ${q.caseId} ${q.kind} rank ${i < 0 ? "-" : i + 1}  Q: ${q.text.slice(0, 200).replace(/\n/g, " ")}`);
    console.log(`  WANT (${f(q.want)}): ${q.errors[q.want] ?? "?"}`);
    console.log(`  TOP  (${f(order[0]!)}): ${q.errors[order[0]!] ?? "?"}`);
  }
}

function evaluate(data: QueryDump[]) {
  const rand = rng(16);
  const cases = shuffle([...new Set(data.map((q) => q.caseId))], rand);
  const FOLDS = 5;
  const foldOf = new Map(cases.map((c, i) => [c, i % FOLDS]));
  const base = emptyHits();
  const firstOnly = emptyHits();
  for (const q of data) {
    count(base, q.kind, handSet(q), q.want);
    count(firstOnly, q.kind, [...q.fpIds, ...q.cands.map((r) => r.id)], q.want);
  }
  console.log(`first stage alone          ${fmt(firstOnly)}`);
  console.log(`hand-set stage (prod)      ${fmt(base)}`);
  const within = emptyHits();
  for (const q of data) count(within, q.kind, [...q.cands.map((r) => r.id)], q.want);
  const reach = (d: number) =>
    KINDS.map((k) => {
      const qs = data.filter((q) => q.kind === k);
      return `${k} ${(qs.filter((q) => q.fpIds.includes(q.want) || q.cands.slice(0, d).some((r) => r.id === q.want)).length / qs.length).toFixed(3)}`;
    }).join("  ");
  for (const d of [10, 20, 30]) console.log(`ceiling: relevant within fingerprint or first ${d}: ${reach(d)}`);

  const FEATURE_SETS: Record<string, (typeof FEATURES)[number][]> = {
    "prod3 (lex cos cov)": ["lex", "cos", "cov"],
    "prod3 + idfCov": ["lex", "cos", "cov", "idfCov"],
    "prod3 + fields": ["lex", "cos", "cov", "covErr", "covRc", "covBody"],
    "prod3 + prec": ["lex", "cos", "cov", "prec", "idfPrec"],
    "prod3 + ids/type": ["lex", "cos", "cov", "idMatch", "idMiss", "typeMatch", "typeMiss"],
    "prod3 + ranks": ["lex", "cos", "cov", "blendRank", "lexRank", "vecRank"],
    "prod3 + covBody + prec": ["lex", "cos", "cov", "covBody", "prec", "idfPrec"],
    "prod3 + covBody + idfCovAll + prec": ["lex", "cos", "cov", "covBody", "idfCovAll", "prec", "idfPrec"],
    "all but strength": FEATURES.filter((f) => f !== "strength"),
    all: [...FEATURES],
  };
  const stds = FEATURES.map((_, j) => {
    const xs = data.flatMap((q) => q.cands.map((r) => r.f[j]!));
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length) || 1;
  });
  for (const [name, set] of Object.entries(FEATURE_SETS)) {
    const use = set.map((f) => FI[f]);
    for (const depth of [10, 30]) {
      for (const l2 of [1, 10]) {
        const hits = emptyHits();
        const changed = Object.fromEntries(KINDS.map((k) => [k, { won: 0, lost: 0 }]));
        const wsum = new Array(use.length).fill(0);
        for (let fold = 0; fold < FOLDS; fold++) {
          const train = data.filter((q) => foldOf.get(q.caseId) !== fold);
          const test = data.filter((q) => foldOf.get(q.caseId) === fold);
          const ps = pairs(train, depth, use).map((p) => ({ ...p, d: p.d.map((x, k) => x / stds[use[k]!]!) }));
          const w = fitLogistic(ps, use.length, l2);
          w.forEach((x, k) => (wsum[k] += x / stds[use[k]!]! / FOLDS));
          const model: Model = (f) => use.reduce((s, j, k) => s + (w[k]! * f[j]!) / stds[j]!, 0);
          for (const q of test) {
            const order = orderBy(q, model, depth);
            count(hits, q.kind, order, q.want);
            const now = order[0] === q.want;
            const before = handSet(q)[0] === q.want;
            if (now && !before) changed[q.kind]!.won++;
            if (before && !now) changed[q.kind]!.lost++;
          }
        }
        // Weights relative to the cosine's (or the first), to compare with the hand-set 0.25/1/1.
        const ref = wsum[set.indexOf("cos")] || wsum[0];
        console.log(
          `CV logistic ${name.padEnd(20)} depth ${String(depth).padStart(2)} l2 ${String(l2).padStart(2)}  ${fmt(hits)}  R@1 won/lost ${KINDS.map((k) => `${changed[k]!.won}/${changed[k]!.lost}`).join(" ")}  w/cos: ${set.map((f, k) => `${f} ${(wsum[k] / ref).toFixed(2)}`).join(" ")}`,
        );
      }
    }
  }
  for (const set of [["lex", "cos", "cov"], FEATURES.filter((f) => f !== "strength")] as (typeof FEATURES)[number][][]) {
    const use = set.map((f) => FI[f]);
    for (const rounds of [30, 100, 300]) {
      const hits = emptyHits();
      for (let fold = 0; fold < FOLDS; fold++) {
        const train = data.filter((q) => foldOf.get(q.caseId) !== fold);
        const model = fitStumps(train, 10, use, rounds, 0.3);
        for (const q of data.filter((q) => foldOf.get(q.caseId) === fold)) count(hits, q.kind, orderBy(q, model, 10), q.want);
      }
      console.log(`CV stumps ${set.length === 3 ? "prod3" : "all but strength"} rounds ${rounds} depth 10   ${fmt(hits)}`);
    }
  }
  // B: pseudo-relevance feedback, each setting followed by the production second stage.
  const settings = Object.keys(data[0]!.prf);
  for (const s of settings) {
    const hits = emptyHits();
    for (const q of data) count(hits, q.kind, [...q.fpIds, ...q.prf[s]!], q.want);
    console.log(`PRF ${s.padEnd(28)} ${fmt(hits)}`);
  }
}

const data: QueryDump[] = process.argv.includes("--reuse") && existsSync(DUMP) ? JSON.parse(readFileSync(DUMP, "utf8")) : await dump();
if (!process.argv.includes("--reuse")) writeFileSync(DUMP, JSON.stringify(data));
if (process.argv.includes("--misses")) misses(data);
else evaluate(data);
