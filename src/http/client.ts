// Who is calling: the client address (the socket peer, or X-Forwarded-For behind a trusted
// proxy) and the agent id (X-Colony-Agent, else a keyed pseudonym of the address).
import { createHmac } from "node:crypto";
import { ServiceError, type Caller } from "../service/errors";
import { clientNetwork, forwardedClient, type TrustProxy } from "../core/proxy-trust";
import { AGENT_ID_RULE, isAgentId } from "../core/agent-id";

export type ClientIdentity = Caller;

/**
 * The client a request counts for: its address, an IPv6 one as its /64 network (clientNetwork).
 * `request.headers` is read only behind a trusted proxy: materialising Bun's headers costs ~1.5 µs.
 */
export function clientAddress(request: Pick<Request, "headers">, peer: string | null, trust: TrustProxy): string {
  if (trust.kind === "off") return peer === null ? "unknown" : clientNetwork(peer);
  return clientNetwork(forwardedClient(request.headers.get("x-forwarded-for"), peer, trust));
}

/**
 * Recent pseudonyms: an HMAC per request costs a third of a cheap request's time. Two generations
 * of at most MAX_PSEUDONYMS / 2 each (about 1.5 MB in all): a name used again moves to the current
 * one, and when that is full the older generation is dropped whole, so a flood of new addresses
 * never grows the memo and frequent clients keep their entry.
 */
export const MAX_PSEUDONYMS = 10_000;
let recentPseudonyms = new Map<string, string>();
let olderPseudonyms = new Map<string, string>();

export function pseudonym(address: string, secret: string): string {
  const key = `${secret}\u0000${address}`;
  let name = recentPseudonyms.get(key);
  if (name !== undefined) return name;
  name = olderPseudonyms.get(key) ?? "anon-" + createHmac("sha256", secret).update(address).digest("base64url").slice(0, 16);
  if (recentPseudonyms.size >= MAX_PSEUDONYMS / 2) {
    olderPseudonyms = recentPseudonyms;
    recentPseudonyms = new Map();
  }
  recentPseudonyms.set(key, name);
  return name;
}

/** Pseudonyms memoized (for tests). */
export const pseudonymMemoSize = () => recentPseudonyms.size + olderPseudonyms.size;

/** A malformed X-Colony-Agent: 400 invalid_request (an MCP endpoint answers a JSON-RPC server error). */
export class InvalidAgentHeaderError extends ServiceError {
  constructor() {
    super("invalid_request", `X-Colony-Agent must be ${AGENT_ID_RULE}`);
  }
}

/** The declared agent id, or null when none is sent; InvalidAgentHeaderError when it is malformed. */
export function checkAgentHeader(headers: Headers): string | null {
  const declared = headers.get("x-colony-agent");
  if (declared !== null && !isAgentId(declared)) throw new InvalidAgentHeaderError();
  return declared;
}

export function identify(headers: Headers, address: string, secret: string): ClientIdentity {
  const declared = checkAgentHeader(headers);
  const client = pseudonym(address, secret);
  if (declared !== null) return { address, client, agent: declared, agentDeclared: true };
  return { address, client, agent: client, agentDeclared: false };
}
