// Search (interface.md 4.2, decisions §3): fingerprint matches first, then the hybrid of
// lexical and vector retrieval fills the limit, never repeating a trail, indexed trails only.
import { atLeast, bestConfidence, confidenceOf, coverageOf, queryWords } from "../core/confidence";
import { currentAndOlderFingerprints, fingerprintAsSent } from "../core/fingerprint";
import { errorGlossaryText } from "../core/enrichment";
import { glossaryExpansion } from "../core/error-glossary";
import { lexicalIndexTokens } from "../core/lexical";
import { hotLabelOf } from "../core/hot-label";
import { errorLineAsKept } from "../core/prepare";
import { environmentOverlap } from "../core/overlap";
import {
  OVERLAP_WEIGHT,
  RRF_K,
  rank,
  rankByBlend,
  RERANK_DEPTH,
  RERANK_WEIGHTS,
  rerank,
  STRENGTH_WEIGHT,
  VECTOR_WEIGHT_BY_MODEL,
  type Candidate,
  type Covered,
  type Fusion,
  type FusionWeights,
} from "../core/ranking";
import { redactText } from "../core/redaction";
import { parseSearchRequest, type SearchRequest } from "../core/trail";
import type { Embedder } from "../embedding/embedder";
import { StoreUnavailableError, type Store, type TrailRecord, type VectorStore } from "../store/ports";
import { requireStore, ServiceError, type Caller } from "./errors";
import { NO_METRICS, type Metrics } from "./metrics";
import { UNTRUSTED_NOTICE, type SearchEnvelope, type SearchResult, type TrailService } from "./trails";

/** The envelope's note when no result is at least likely. */
export const NO_LIKELY_MATCH =
  "No result is a likely match for this error: the trails below are only the closest ones; check that their error is yours before using a fix.";

/** How many candidates each retriever contributes to the fusion. */
export const CANDIDATES_PER_RETRIEVER = 30;

export interface SearchDeps {
  store: Store | null;
  vectors: VectorStore | null;
  embedder: Embedder | null;
  trails: TrailService;
  now: () => number;
  metrics?: Metrics;
  /** Whether a search of this address may still count under its error_type this hour (Quotas.takeHotLabel); always, when omitted. */
  takeHotLabel?: (address: string) => Promise<boolean>;
  /** Whether a search under a declared agent id of this address still marks it seen (Quotas.takeAgentSeen); always, when omitted. */
  takeAgentSeen?: (address: string) => Promise<boolean>;
}

/** Why a result is where it is: the inputs and terms of the fusion (src/core/ranking.ts). */
export interface Explanation {
  trail_id: string;
  via: "fingerprint" | "semantic";
  fusion: Fusion | null;
  weights: { lexical: number; vector: number; coverage: number; strength: number; environment: number } | null;
  /** BM25 divided by the query's best BM25 (0..1); null when the lexical index did not find it. */
  lexical_score: number | null;
  lexical_rank: number | null;
  /** Cosine similarity of the query to the trail. */
  cosine: number | null;
  vector_rank: number | null;
  /** Share of the query's words in the trail's error and root cause (the second stage's input). */
  coverage: number | null;
  strength: number;
  environment_overlap: number;
  /** Each term's contribution to the score that placed the result (weight times input). */
  terms: { lexical: number; vector: number; coverage: number; strength: number; environment: number } | null;
  score: number;
}

function fingerprintExplanation(r: SearchResult): Explanation {
  return {
    trail_id: r.trail_id,
    via: "fingerprint",
    fusion: null,
    weights: null,
    lexical_score: null,
    lexical_rank: null,
    cosine: null,
    vector_rank: null,
    coverage: null,
    strength: r.strength,
    environment_overlap: r.match.environment_overlap,
    terms: null,
    score: 1,
  };
}

/** Which retrievers run: the hybrid in production; one alone for the quality benchmark. */
export type RetrievalMode = "hybrid" | "lexical" | "vector";

export class SearchService {
  /** The fusion weights in use; the vector vote follows the kind of embedding model loaded. */
  weights: FusionWeights;
  /** The score blend in production; rank fusion only as the benchmark's baseline. */
  fusion: Fusion = "blend";
  /** The second stage (src/core/ranking.ts rerank) in production; off only for A/B measurement. */
  reranking = true;

  constructor(private readonly deps: SearchDeps) {
    this.weights = { lexical: 1, vector: VECTOR_WEIGHT_BY_MODEL[deps.embedder?.info.kind ?? "transformer"] };
  }

  parse(input: unknown): SearchRequest {
    const parsed = parseSearchRequest(input);
    if (!parsed.ok) throw new ServiceError("invalid_request", "the search request is not valid", parsed.details);
    return parsed.value;
  }

  async search(input: unknown, caller: Caller, mode: RetrievalMode = "hybrid"): Promise<SearchEnvelope> {
    const req = this.parse(input);
    const { envelope, top } = await this.run(req, mode, null);
    try {
      await this.recordSearch(requireStore(this.deps.store), caller, req, envelope.results, top?.category ?? null);
    } catch (err) {
      // The answer is read already; a full disk costs the activity feed this search, not the
      // caller its results (/readyz reports the failing writes).
      if (!(err instanceof StoreUnavailableError)) throw err;
    }
    return envelope;
  }

  /**
   * The same search with the terms that ranked each result (for the operator console). It is not
   * recorded: an operator looking into the ranking is not a search of the colony's agents.
   */
  async explain(input: unknown): Promise<SearchEnvelope & { explanations: Explanation[] }> {
    const req = this.parse(input);
    const explanations: Explanation[] = [];
    const { envelope } = await this.run(req, "hybrid", explanations);
    return { ...envelope, explanations };
  }

  /** Fingerprint matches, then the hybrid; `explain` (when given) receives each result's terms. */
  private async run(
    req: SearchRequest,
    mode: RetrievalMode,
    explain: Explanation[] | null,
  ): Promise<{ envelope: SearchEnvelope; top: TrailRecord | undefined }> {
    const { vectors, embedder, trails } = this.deps;
    const metrics = this.deps.metrics ?? NO_METRICS;
    const store = requireStore(this.deps.store);
    const limit = req.limit ?? 5;
    const minStrength = req.min_strength ?? 0;
    const minConfidence = req.min_confidence ?? "weak";
    // The query as a trail keeps its error line, whichever door it came through (src/core/prepare.ts).
    const errorLine = errorLineAsKept(req.query);
    // Also what older normalizers gave the query (only versions some trail not re-fingerprinted yet
    // still carries), and the query itself when it is a fingerprint a client cached (aliases resolve).
    const { current: fp, older } = currentAndOlderFingerprints(errorLine, trails.olderVersionsInStore());
    const sentFingerprint = fingerprintAsSent(req.query);
    const known = [fp, ...older, ...(sentFingerprint ? [sentFingerprint] : [])];

    const byFingerprint = (await trails.fingerprintMatches(known, req.error_type, limit)).filter((r) => (r.strength ?? 0) >= minStrength);
    const results: SearchResult[] = byFingerprint.map((r) => trails.result(r, "fingerprint", 1, req.environment));
    explain?.push(...results.map((r) => fingerprintExplanation(r)));
    let top: TrailRecord | undefined = byFingerprint[0];
    const seen = new Set(byFingerprint.map((r) => r.seq));

    if (results.length < limit) {
      if (!vectors || !embedder) {
        throw new ServiceError("unavailable", "semantic search is not available (embedding model or vector index down)");
      }
      // The two retrievers run side by side: the model embeds the query on ONNX Runtime's thread and
      // the vector index is scanned while the lexical index's answer is on its way (a database
      // round trip with PostgreSQL).
      const started = performance.now();
      const embedding = embedder.embed([req.query]);
      const lexicalSearch = async () => {
        if (mode === "vector") return [];
        const hits = await store.lexical.search(lexicalIndexTokens(req.query), CANDIDATES_PER_RETRIEVER);
        metrics.searchPhase("lexical", (performance.now() - started) / 1000);
        return hits;
      };
      const vectorSearch = async () => {
        const [query] = await embedding;
        const vectorStarted = performance.now();
        metrics.searchPhase("embed", (vectorStarted - started) / 1000);
        const hits = mode === "lexical" ? [] : await vectors.search(query!, CANDIDATES_PER_RETRIEVER);
        return { query: query!, hits, vectorStarted };
      };
      const [lexical, { query, hits: vector, vectorStarted }] = await Promise.all([lexicalSearch(), vectorSearch()]);
      const ids = [...new Set([...lexical.map((h) => h.id), ...vector.map((h) => h.id)])].filter((id) => !seen.has(id));
      // Vector hits carry their cosine already; only lexical-only candidates need theirs, read
      // together with every candidate's ranking facts.
      const similarity = new Map(vector.map((h) => [h.id, h.similarity]));
      const missing = ids.filter((id) => !similarity.has(id));
      const [similarities, factList] = await Promise.all([
        vectors.similarities(query, missing).then((found) => {
          metrics.searchPhase("vector", (performance.now() - vectorStarted) / 1000);
          return found;
        }),
        store.trails.rankingFacts(ids, { environment: !!req.environment }),
      ]);
      for (const [id, sim] of similarities) similarity.set(id, sim);
      const rankStarted = performance.now();
      const facts = new Map(factList.map((f) => [f.seq, f]));
      const lexicalRank = new Map(lexical.map((h, i) => [h.id, i]));
      const bestLexical = lexical.reduce((m, h) => Math.max(m, h.score), 0);
      const lexicalScore = new Map(lexical.map((h) => [h.id, bestLexical > 0 ? h.score / bestLexical : 0]));
      const vectorRank = new Map(vector.map((h, i) => [h.id, i]));
      const candidates: Candidate[] = [];
      for (const id of ids) {
        const f = facts.get(id);
        if (!f || f.status !== "indexed" || (f.strength ?? 0) < minStrength) continue;
        candidates.push({
          id,
          lexicalRank: lexicalRank.get(id),
          vectorRank: vectorRank.get(id),
          lexicalScore: lexicalScore.get(id),
          similarity: similarity.get(id),
          strength: f.strength ?? 0,
          overlap: environmentOverlap(req.environment, f.environment ?? undefined),
        });
      }
      const ranked = this.fusion === "blend" ? rankByBlend(candidates, this.weights) : rank(candidates, this.weights);
      // The second stage reads the first stage's few best whole (their error and root cause give
      // the coverage that re-orders them and rates each match); a trail that changed status since
      // its facts were read is skipped.
      const shortlist = ranked.slice(0, Math.max(RERANK_DEPTH, limit - results.length));
      const records = new Map((await store.trails.bySeqs(shortlist.map((c) => c.id))).map((r) => [r.seq, r]));
      const words = queryWords(req.query);
      const wordNeighbours = embedder?.wordNeighbours ?? null;
      const covered: (Candidate & Covered)[] = [];
      for (const c of shortlist) {
        const record = records.get(c.id);
        if (!record || record.status !== "indexed") continue;
        const glossary = glossaryExpansion().coverage ? `\n${errorGlossaryText(record.trail)}` : "";
        covered.push({
          ...c,
          coverage: coverageOf(words, `${record.trail.problem.error}\n${record.trail.problem.root_cause ?? ""}${glossary}`, wordNeighbours),
        });
      }
      for (const c of this.reranking ? rerank(covered) : covered) {
        if (results.length >= limit) break;
        const confidence = confidenceOf({ via: "semantic", cosine: round(c.similarity ?? 0), coverage: c.coverage });
        if (!atLeast(confidence, minConfidence)) continue;
        const record = records.get(c.id)!;
        const result = trails.result(record, "semantic", round(c.similarity ?? 0), req.environment, confidence);
        results.push(result);
        explain?.push(this.explanation(result, c));
        top ??= record;
      }
      metrics.searchPhase("rank", (performance.now() - rankStarted) / 1000);
    }
    const confidence = bestConfidence(results.map((r) => r.match.confidence));
    const envelope: SearchEnvelope = { fingerprint: fp, results, notice: UNTRUSTED_NOTICE, confidence };
    if (!atLeast(confidence, "likely")) envelope.confidence_note = NO_LIKELY_MATCH;
    return { envelope, top };
  }

  /** The terms of the score that placed a result (src/core/ranking.ts). */
  private explanation(result: SearchResult, c: Candidate & Covered): Explanation {
    const w = this.reranking ? { ...RERANK_WEIGHTS } : { ...this.weights, coverage: 0 };
    const terms =
      this.reranking || this.fusion === "blend"
        ? {
            lexical: w.lexical * (c.lexicalScore ?? 0),
            vector: w.vector * (c.similarity ?? 0),
            coverage: w.coverage * c.coverage,
            strength: STRENGTH_WEIGHT * c.strength,
            environment: OVERLAP_WEIGHT * c.overlap,
          }
        : {
            lexical: c.lexicalRank === undefined ? 0 : w.lexical / (RRF_K + c.lexicalRank + 1),
            vector: c.vectorRank === undefined ? 0 : w.vector / (RRF_K + c.vectorRank + 1),
            coverage: 0,
            strength: STRENGTH_WEIGHT * c.strength,
            environment: OVERLAP_WEIGHT * c.overlap,
          };
    return {
      trail_id: result.trail_id,
      via: "semantic",
      fusion: this.fusion,
      weights: { ...w, strength: STRENGTH_WEIGHT, environment: OVERLAP_WEIGHT },
      lexical_score: c.lexicalScore ?? null,
      lexical_rank: c.lexicalRank ?? null,
      cosine: c.similarity ?? null,
      vector_rank: c.vectorRank ?? null,
      coverage: round(c.coverage),
      strength: c.strength,
      environment_overlap: c.overlap,
      terms: roundAll(terms),
      score: round(terms.lexical + terms.vector + terms.coverage + terms.strength + terms.environment),
    };
  }

  /** The search event and the hot-label counter. Never the query text. */
  private async recordSearch(
    store: Store,
    caller: Caller,
    req: SearchRequest,
    results: SearchResult[],
    topCategory: string | null,
  ): Promise<void> {
    const top = results[0];
    // error_type is caller text: redacted like any content, and public only as one error-type token,
    // and only for an address's first HOT_LABELS_PER_CLIENT_PER_HOUR such searches of the hour.
    const token = hotLabelOf(req.error_type ? redactText(req.error_type).text : undefined);
    // An address's pseudonym is one agent; declared ids are free to invent, so only a share is seen.
    // The two counters are independent: asked together (shared counters are a round trip each).
    const [counted, seen] = await Promise.all([
      token !== null && (this.deps.takeHotLabel?.(caller.address) ?? true),
      !caller.agentDeclared || (this.deps.takeAgentSeen?.(caller.address) ?? true),
    ]);
    const label = (counted ? token : null) ?? topCategory;
    const at = this.deps.now();
    // The writes are independent: sent together, a database pipelines them in one round trip.
    return store.transaction(async (tx) => {
      await Promise.all([
        tx.events.append({
          kind: "search",
          agent: caller.agent,
          trailId: top?.trail_id ?? null,
          text: top
            ? `search${label ? ` for ${label}` : ""}: ${results.length} result${results.length === 1 ? "" : "s"}, best via ${top.match.via}`
            : `search${label ? ` for ${label}` : ""}: no result`,
          at,
        }),
        label ? tx.searches.add(label, caller.client, at) : undefined,
        tx.stats.bump("searches", at),
        seen ? tx.stats.touchAgent(caller.agent, at) : undefined,
      ]);
    });
  }
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const roundAll = <T extends Record<string, number>>(o: T): T => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v)])) as T;
