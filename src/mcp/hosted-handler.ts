// The part of the hosted endpoint that needs the MCP SDK, loaded on the first /mcp request so a
// colony that never serves MCP does not carry the SDK in memory.
import type { ColonyService } from "../service/colony";
import type { Caller } from "../service/errors";
import { InProcessColonyClient } from "./colony-client";
import { HOSTED_MCP_DEADLINE_MS, handleStatelessPost, methodNotAllowed, refusalBeforeRunning } from "./stateless";
import type { ToolConfig } from "./config";
import { createToolServer } from "./tool-server";

export { methodNotAllowed, refusalBeforeRunning };

export function handleHostedPost(service: ColonyService, config: ToolConfig, caller: Caller, request: Request, body: unknown) {
  return handleStatelessPost(
    createToolServer(new InProcessColonyClient(service, caller), config),
    request,
    body,
    undefined,
    HOSTED_MCP_DEADLINE_MS,
  );
}
