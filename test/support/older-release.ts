// Rows as an older release left them, written straight to a colony's store: a trail redacted and
// screened by rules that missed what the current ones catch (content rules version 0, or one given),
// for the content-rules upgrade tests and the re-screening bench.
import { randomUUID } from "node:crypto";
import { embeddingText, lexicalFields } from "../../src/core/enrichment";
import { fingerprint, NORMALIZER_VERSION } from "../../src/core/fingerprint";
import { mergeKey } from "../../src/core/merge-key";
import { assessRisk } from "../../src/core/risk";
import type { Trail } from "../../src/core/trail";
import type { Subsystems } from "../../src/service/subsystems";
import { contentHash } from "../../src/service/trails";
import type { TrailRecord } from "../../src/store/ports";

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
  const version = row.contentRulesVersion ?? 0;
  const indexed = (row.status ?? "indexed") === "indexed";
  const [vector] = indexed ? await embedder!.embed([embeddingText(trail)]) : [];
  const at = Date.now();
  return store!.transaction(async (tx) => {
    const r = await tx.trails.insertQueued({
      id: randomUUID(),
      fingerprint: fingerprint(trail.problem.error),
      normalizerVersion: NORMALIZER_VERSION,
      contentRulesVersion: version,
      errorType: trail.problem.error_type ?? null,
      trail,
      contentHash: contentHash(trail),
      author: "older-release-agent",
      client: null,
      createdAt: at,
    });
    if (indexed) {
      const risk = row.risk ?? assessRisk(trail);
      const verdict = { category: "dependency", quality: 0.8, risk, strength: 0.5, mergeKey: mergeKey(trail), at };
      await tx.trails.applyVerdict(r.seq, { status: "indexed", trail, ...verdict, contentRulesVersion: version });
    } else {
      await tx.trails.applyVerdict(r.seq, { status: "rejected", trail, reasons: row.reasons ?? [], at, contentRulesVersion: version });
    }
    await tx.jobs.remove(r.seq);
    if (indexed) {
      await tx.vectors!.upsert(r.seq, vector!);
      await tx.lexical.add(r.seq, lexicalFields(trail));
    }
    return (await tx.trails.bySeq(r.seq))!;
  });
}
