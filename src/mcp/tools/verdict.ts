// What the colony decided about a published trail, in words a model can pass on; shared by
// colony_publish (which waits for it) and colony_publish_status (which asks once).
import { Type } from "@sinclair/typebox";
import { ColonyClientError, type ColonyClient, type TrailStatus } from "../colony-client";
import { describeColonyError } from "./results";

export type Verdict = Record<string, unknown>;

/** The fields describeVerdict may set, for the output schemas of the tools that report one. */
export const VerdictFields = {
  status: Type.Optional(
    Type.String({ description: "published, already_known, rejected, removed, still_queued, or sent (verdict unknown)" }),
  ),
  trail_id: Type.Optional(Type.String()),
  strength: Type.Optional(Type.Number()),
  category: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  merged_into: Type.Optional(Type.String()),
  reasons: Type.Optional(Type.Array(Type.String())),
  message: Type.Optional(Type.String()),
};

export interface VerdictWait {
  /** When to stop polling (epoch ms); one status read is made even when it has passed. */
  until: number;
  intervalMs?: number;
  /** Called about every PROGRESS_EVERY_MS while the trail is still queued. */
  progress?: (message: string) => void;
}

const PROGRESS_EVERY_MS = 5_000;

/**
 * Polls the trail until the colony decides, or the wait runs out (interface.md §4.14 rule 4). No
 * status read outlasts the wait by more than a second (the client is bound to `until` by the caller).
 */
export async function waitForVerdict(client: ColonyClient, trailId: string, wait: VerdictWait): Promise<Verdict> {
  const started = Date.now();
  let progressAt = started + PROGRESS_EVERY_MS;
  for (;;) {
    let status: TrailStatus;
    try {
      status = await client.trailStatus(trailId);
    } catch (err) {
      const why = err instanceof ColonyClientError ? describeColonyError(err, client.target) : String(err);
      return { status: "sent", trail_id: trailId, message: `The trail was accepted, but its verdict could not be read: ${why}` };
    }
    const now = Date.now();
    if (status.status !== "queued" || now >= wait.until) return describeVerdict(trailId, status, Math.round((now - started) / 1000));
    if (now >= progressAt) {
      wait.progress?.(`the trail is queued; waiting for the colony's verdict (${Math.round((now - started) / 1000)} s)`);
      progressAt = now + PROGRESS_EVERY_MS;
    }
    await Bun.sleep(Math.min(wait.intervalMs ?? 250, Math.max(1, wait.until - now)));
  }
}

export function describeVerdict(trailId: string, s: TrailStatus, waitS: number): Verdict {
  switch (s.status) {
    case "indexed":
      return {
        status: "published",
        trail_id: trailId,
        strength: s.strength,
        category: s.category,
        message: "Published: the trail is indexed and searchable.",
      };
    case "merged":
      return {
        status: "already_known",
        trail_id: trailId,
        merged_into: s.merged_into,
        message: `Already known: the colony holds the same fix and merged this trail into ${s.merged_into}.`,
      };
    case "rejected":
      return {
        status: "rejected",
        trail_id: trailId,
        reasons: s.reasons ?? [],
        message: `Rejected by the colony: ${(s.reasons ?? []).join(", ") || "no reason given"}.`,
      };
    case "removed":
      return { status: "removed", trail_id: trailId, message: "The trail was removed by an operator." };
    default:
      return {
        status: "still_queued",
        trail_id: trailId,
        message: `Still queued after ${waitS} s; call colony_publish_status with id ${trailId} later for the verdict.`,
      };
  }
}
