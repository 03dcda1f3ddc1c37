// colony_publish_status (interface.md §4.14): for a draft id, whether the user approved it; for
// a trail id, what the colony decided.
import { type Static, Type } from "@sinclair/typebox";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { TrailStatus } from "../colony-client";
import { structured } from "./results";
import type { ColonyTool, ToolContext } from "./tool";
import { describeVerdict, VerdictFields } from "./verdict";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const StatusInput = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 100,
    description: "A draft_id returned by colony_publish on a hosted server, or a trail_id.",
  }),
});

const StatusOutput = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal("draft"), Type.Literal("trail")]),
  approved: Type.Optional(Type.Boolean({ description: "drafts: whether the user pressed Publish" })),
  state: Type.Optional(Type.String({ description: "drafts: pending, published or discarded" })),
  expires_in: Type.Optional(Type.Integer()),
  colony_status: Type.Optional(
    Type.String({ description: "the trail's status in the colony: queued, indexed, merged, rejected, removed" }),
  ),
  ...VerdictFields,
  message: Type.String(),
});

async function publishStatus(args: Static<typeof StatusInput>, { client }: ToolContext): Promise<CallToolResult> {
  const id = args.id.trim();
  if (UUID.test(id)) {
    const s = await client.trailStatus(id.toLowerCase());
    return structured({ id, kind: "trail", ...describeVerdict(id, s, 0), colony_status: s.status });
  }
  const d = await client.draftStatus(id);
  if (d.state === "pending") {
    return structured({
      id,
      kind: "draft",
      approved: false,
      state: "pending",
      expires_in: d.expires_in,
      message: "Waiting for the user to press Publish on the approval page.",
    });
  }
  if (d.state === "discarded") {
    return structured({
      id,
      kind: "draft",
      approved: false,
      state: "discarded",
      message: "The user discarded this draft; nothing was published.",
    });
  }
  const base = { id, kind: "draft", approved: true, state: "published", trail_id: d.trail_id };
  if (!d.trail_id) return structured({ ...base, message: "Approved and published." });
  let s: TrailStatus;
  try {
    s = await client.trailStatus(d.trail_id);
  } catch {
    s = { trail_id: d.trail_id, status: (d.trail_status as TrailStatus["status"]) ?? "queued", reasons: d.reasons };
  }
  const verdict = describeVerdict(d.trail_id, s, 0);
  if (s.status === "queued") verdict.message = "Approved; the colony is still checking the trail. Ask again in a few seconds.";
  return structured({ ...base, ...verdict, colony_status: s.status });
}

export const colonyPublishStatus: ColonyTool<typeof StatusInput> = {
  name: "colony_publish_status",
  title: "Check a publication",
  description:
    "Call this to learn what happened to something you published: for a draft id (hosted server), whether the user " +
    "approved it yet; for a trail id, what the colony decided (published and indexed, already known and merged, or " +
    "rejected and why).",
  input: StatusInput,
  output: StatusOutput,
  annotations: { readOnlyHint: true, openWorldHint: true },
  run: publishStatus,
};
