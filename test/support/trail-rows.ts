// Trail rows written straight to a store, for tests and benches that need stored trails without
// publishing them: the row a publish inserts (`trailRow`), a trail as enrichment indexes it
// (`indexStored`), and a trail as an older release left it (`storeAsOlderRelease`: redacted and
// screened by rules that missed what the current ones catch).
import { randomUUID } from "node:crypto";
import { CONTENT_RULES_VERSION } from "../../src/core/content-rules";
import { embeddingText, lexicalFields } from "../../src/core/enrichment";
import { fingerprint, NORMALIZER_VERSION } from "../../src/core/fingerprint";
import { mergeKey } from "../../src/core/merge-key";
import { assessRisk } from "../../src/core/risk";
import type { Trail } from "../../src/core/trail";
import type { Subsystems } from "../../src/service/subsystems";
import { contentHash } from "../../src/service/trails";
import type { NewTrail, Transaction, TrailRecord } from "../../src/store/ports";

/** The row a publish of `trail` inserts (queued), with the current versions unless told otherwise. */
export function trailRow(trail: Trail, row: Partial<NewTrail> = {}): NewTrail {
  return {
    id: randomUUID(),
    fingerprint: fingerprint(trail.problem.error),
    normalizerVersion: NORMALIZER_VERSION,
    contentRulesVersion: CONTENT_RULES_VERSION,
    errorType: trail.problem.error_type ?? null,
    trail,
    contentHash: contentHash(trail),
    author: "test-agent",
    client: null,
    createdAt: 1_700_000_000_000,
    ...row,
  };
}

export interface StoredAs {
  /** The content rules version it was checked with (default: the current one). */
  contentRulesVersion?: number;
  risk?: ReturnType<typeof assessRisk>;
  /** Its vector, when the store has a vector index to fill. */
  vector?: Float32Array;
  at?: number;
}

/** Inserts `trail` and indexes it as enrichment does (verdict, lexical document, vector if given); its record. */
export async function indexStored(tx: Transaction, trail: Trail, as: StoredAs & Partial<NewTrail> = {}): Promise<TrailRecord> {
  const { risk, vector, at, ...row } = as;
  const version = as.contentRulesVersion ?? CONTENT_RULES_VERSION;
  const r = await tx.trails.insertQueued(trailRow(trail, { ...row, contentRulesVersion: version }));
  await tx.trails.applyVerdict(r.seq, {
    status: "indexed",
    trail,
    category: "dependency",
    quality: 0.8,
    risk: risk ?? assessRisk(trail),
    strength: 0.5,
    mergeKey: mergeKey(trail),
    at: at ?? r.createdAt,
    contentRulesVersion: version,
  });
  await tx.jobs.remove(r.seq);
  if (vector) await tx.vectors!.upsert(r.seq, vector);
  await tx.lexical.add(r.seq, lexicalFields(trail));
  return (await tx.trails.bySeq(r.seq))!;
}

export interface OlderRow {
  /** indexed (the default: with its lexical document and vector) or rejected for `reasons`. */
  status?: "indexed" | "rejected";
  reasons?: string[];
  risk?: ReturnType<typeof assessRisk>;
  /** The content rules version it was checked with (default 0: before the version was kept). */
  contentRulesVersion?: number;
}

/** Stores `trail` with its content as given, as an older release's enrichment left it. */
export async function storeAsOlderRelease(
  subsystems: Pick<Subsystems, "store" | "embedder">,
  trail: Trail,
  row: OlderRow = {},
): Promise<TrailRecord> {
  const { store, embedder } = subsystems;
  const contentRulesVersion = row.contentRulesVersion ?? 0;
  const at = Date.now();
  const who = { author: "older-release-agent", createdAt: at, contentRulesVersion };
  if ((row.status ?? "indexed") === "indexed") {
    const [vector] = await embedder!.embed([embeddingText(trail)]);
    return store!.transaction((tx) => indexStored(tx, trail, { ...who, risk: row.risk, vector, at }));
  }
  return store!.transaction(async (tx) => {
    const r = await tx.trails.insertQueued(trailRow(trail, who));
    await tx.trails.applyVerdict(r.seq, { status: "rejected", trail, reasons: row.reasons ?? [], at, contentRulesVersion });
    await tx.jobs.remove(r.seq);
    return (await tx.trails.bySeq(r.seq))!;
  });
}
