// colony_publish_status (interface.md §4.14): for a draft id, whether the user approved it; for
// a trail id, what the colony decided.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ColonyClient, TrailStatus } from "../colony-client";
import { guarded, text } from "./results";
import { describeVerdict } from "./verdict";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function colonyPublishStatus(client: ColonyClient, args: { id: string }): Promise<CallToolResult> {
  const id = args.id.trim();
  if (UUID.test(id)) {
    const s = await client.trailStatus(id.toLowerCase());
    return text({ id, kind: "trail", ...describeVerdict(id, s, 0), colony_status: s.status });
  }
  const d = await client.draftStatus(id);
  if (d.state === "pending") {
    return text({
      id,
      kind: "draft",
      approved: false,
      state: "pending",
      expires_in: d.expires_in,
      message: "Waiting for the user to press Publish on the approval page.",
    });
  }
  if (d.state === "discarded") {
    return text({
      id,
      kind: "draft",
      approved: false,
      state: "discarded",
      message: "The user discarded this draft; nothing was published.",
    });
  }
  const base = { id, kind: "draft", approved: true, state: "published", trail_id: d.trail_id };
  if (!d.trail_id) return text({ ...base, message: "Approved and published." });
  let s: TrailStatus;
  try {
    s = await client.trailStatus(d.trail_id);
  } catch {
    s = { trail_id: d.trail_id, status: (d.trail_status as TrailStatus["status"]) ?? "queued", reasons: d.reasons };
  }
  const verdict = describeVerdict(d.trail_id, s, 0);
  if (s.status === "queued") verdict.message = "Approved; the colony is still checking the trail. Ask again in a few seconds.";
  return text({ ...base, ...verdict, colony_status: s.status });
}

const STATUS_INPUT = {
  id: z.string().min(1).max(100).describe("A draft_id returned by colony_publish on a hosted server, or a trail_id."),
};

export function registerColonyPublishStatus(server: McpServer, client: ColonyClient): void {
  server.registerTool(
    "colony_publish_status",
    {
      title: "Check a publication",
      description:
        "Call this to learn what happened to something you published: for a draft id (hosted server), whether the user " +
        "approved it yet; for a trail id, what the colony decided (published and indexed, already known and merged, or " +
        "rejected and why).",
      inputSchema: STATUS_INPUT,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(client, (args: { id: string }) => colonyPublishStatus(client, args)),
  );
}
