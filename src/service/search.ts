// Search (interface.md 4.2, decisions §3): fingerprint matches first, then the hybrid of
// lexical and vector retrieval fills the limit, never repeating a trail, indexed trails only.
import { fingerprint } from "../core/fingerprint";
import { lexicalTokens } from "../core/lexical";
import { environmentOverlap } from "../core/overlap";
import { rank, rankByBlend, VECTOR_WEIGHT_BY_MODEL, type Candidate, type Fusion, type FusionWeights } from "../core/ranking";
import { redactText } from "../core/redaction";
import { parseSearchRequest, type SearchRequest } from "../core/trail";
import type { Embedder } from "../embedding/embedder";
import { StoreUnavailableError, type Store, type TrailRecord, type VectorStore } from "../store/ports";
import { requireStore, ServiceError, type Caller } from "./errors";
import { UNTRUSTED_NOTICE, type SearchEnvelope, type SearchResult, type TrailService } from "./trails";

/** How many candidates each retriever contributes to the fusion. */
export const CANDIDATES_PER_RETRIEVER = 30;

export interface SearchDeps {
  store: Store | null;
  vectors: VectorStore | null;
  embedder: Embedder | null;
  trails: TrailService;
  now: () => number;
}

/** Which retrievers run: the hybrid in production; one alone for the quality benchmark. */
export type RetrievalMode = "hybrid" | "lexical" | "vector";

export class SearchService {
  /** The fusion weights in use; the vector vote follows the kind of embedding model loaded. */
  weights: FusionWeights;
  /** The score blend in production; rank fusion only as the benchmark's baseline. */
  fusion: Fusion = "blend";

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
    const { vectors, embedder, trails } = this.deps;
    const store = requireStore(this.deps.store);
    const limit = req.limit ?? 5;
    const minStrength = req.min_strength ?? 0;
    const fp = fingerprint(req.query);

    const byFingerprint = (await trails.fingerprintMatches(fp, req.error_type, limit)).filter((r) => (r.strength ?? 0) >= minStrength);
    const results: SearchResult[] = byFingerprint.map((r) => trails.result(r, "fingerprint", 1, req.environment));
    let top: TrailRecord | undefined = byFingerprint[0];
    const seen = new Set(byFingerprint.map((r) => r.seq));

    if (results.length < limit) {
      if (!vectors || !embedder) {
        throw new ServiceError("unavailable", "semantic search is not available (embedding model or vector index down)");
      }
      // The model runs on ONNX Runtime's thread while the lexical index is queried here.
      const embedding = embedder.embed([req.query]);
      embedding.catch(() => {}); // awaited below; a failure meanwhile must not go unhandled
      const lexical = mode === "vector" ? [] : await store.lexical.search(lexicalTokens(req.query), CANDIDATES_PER_RETRIEVER);
      const [query] = await embedding;
      const vector = mode === "lexical" ? [] : await vectors.search(query!, CANDIDATES_PER_RETRIEVER);
      const ids = [...new Set([...lexical.map((h) => h.id), ...vector.map((h) => h.id)])].filter((id) => !seen.has(id));
      const facts = new Map((await store.trails.rankingFacts(ids, { environment: !!req.environment })).map((f) => [f.seq, f]));
      // Vector hits carry their cosine already; only lexical-only candidates need theirs.
      const similarity = new Map(vector.map((h) => [h.id, h.similarity]));
      const missing = ids.filter((id) => !similarity.has(id));
      for (const [id, sim] of await vectors.similarities(query!, missing)) similarity.set(id, sim);
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
      const chosen = ranked.slice(0, limit - results.length).map((c) => c.id);
      // Whole trails only for the results; one that changed status since its facts were read is skipped.
      const records = new Map((await store.trails.bySeqs(chosen)).map((r) => [r.seq, r]));
      for (const id of chosen) {
        const record = records.get(id);
        if (!record || record.status !== "indexed") continue;
        results.push(trails.result(record, "semantic", round(similarity.get(id) ?? 0), req.environment));
        top ??= record;
      }
    }

    try {
      await this.recordSearch(store, caller, req, results, top?.category ?? null);
    } catch (err) {
      // The answer is read already; a full disk costs the activity feed this search, not the
      // caller its results (/readyz reports the failing writes).
      if (!(err instanceof StoreUnavailableError)) throw err;
    }
    return { fingerprint: fp, results, notice: UNTRUSTED_NOTICE };
  }

  /** The search event and the hot-label counter. Never the query text. */
  private recordSearch(
    store: Store,
    caller: Caller,
    req: SearchRequest,
    results: SearchResult[],
    topCategory: string | null,
  ): Promise<void> {
    const top = results[0];
    // error_type is caller text: redacted like any content before it is kept.
    const label = (req.error_type ? redactText(req.error_type).text.slice(0, 100) : null) || topCategory;
    const at = this.deps.now();
    return store.transaction(async (tx) => {
      await tx.events.append({
        kind: "search",
        agent: caller.agent,
        trailId: top?.trail_id ?? null,
        text: top
          ? `search${label ? ` for ${label}` : ""}: ${results.length} result${results.length === 1 ? "" : "s"}, best via ${top.match.via}`
          : `search${label ? ` for ${label}` : ""}: no result`,
        at,
      });
      if (label) await tx.searches.add(label, at);
      await tx.stats.touchAgent(caller.agent, at);
    });
  }
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
