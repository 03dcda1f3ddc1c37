// The Accept header of a POST to an MCP endpoint, read as RFC 9110 §12.5.1 says. The SDK's
// transport only looks for the two media types as substrings, so `*/*`, `application/*` and
// `application/json, */*;q=0.8` (curl, many HTTP libraries and MCP clients send these) were 406,
// and `application/json;q=0` (a refusal) passed.

/** What a stateless endpoint answers with (`enableJsonResponse`), whenever the caller takes it. */
export const ANSWER_TYPE = "application/json";
/**
 * What it answers a caller that takes only this (some proxies send `Accept: text/event-stream`
 * alone): the same answers as server-sent events, which the Streamable HTTP transport allows a
 * server to answer any POST with (MCP 2025-06-18, "Sending Messages to the Server").
 */
export const EVENT_STREAM_TYPE = "text/event-stream";

/** The Accept the SDK's transport insists on, given to it once the caller's has been judged. */
export const SDK_ACCEPT = "application/json, text/event-stream";

interface MediaRange {
  type: string;
  subtype: string;
  /** Parameters other than q: a range naming them is more specific than one without. */
  params: number;
  q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** The media ranges of an Accept value; an element that is not one (no slash, a bad q) is skipped. */
function mediaRanges(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const element of accept.split(",")) {
    const [range = "", ...parameters] = element.split(";").map((p) => p.trim());
    const slash = range.indexOf("/");
    if (slash < 0) continue;
    const type = range.slice(0, slash).toLowerCase();
    const subtype = range.slice(slash + 1).toLowerCase();
    if (!TOKEN.test(type) || !TOKEN.test(subtype) || (type === "*" && subtype !== "*")) continue;
    let q = 1;
    let params = 0;
    let malformed = false;
    for (const parameter of parameters) {
      const eq = parameter.indexOf("=");
      const name = (eq < 0 ? parameter : parameter.slice(0, eq)).trim().toLowerCase();
      if (name === "q") {
        const value = eq < 0 ? "" : parameter.slice(eq + 1).trim();
        if (!QVALUE.test(value)) malformed = true;
        else q = Number(value);
        break; // what follows the weight is accept-ext, which says nothing about the type
      }
      if (name) params++;
    }
    if (!malformed) ranges.push({ type, subtype, params, q });
  }
  return ranges;
}

/**
 * The weight the caller gives `mediaType` (`type/subtype`, lowercase): that of the most specific
 * range matching it (an exact type with parameters, then the exact type, `type/*`, `*\/*`), 0 when
 * none does. An absent or blank Accept accepts every type (RFC 9110: "a request without any Accept
 * header field implies that the user agent will accept any media type").
 */
export function acceptWeight(accept: string | null, mediaType: string): number {
  if (accept === null || accept.trim() === "") return 1;
  const [type, subtype] = mediaType.split("/");
  let best: { rank: number; q: number } | null = null;
  for (const r of mediaRanges(accept)) {
    let rank: number;
    if (r.type === type && r.subtype === subtype) rank = 2 + (r.params > 0 ? 1 : 0);
    else if (r.type === type && r.subtype === "*") rank = 1;
    else if (r.type === "*" && r.subtype === "*") rank = 0;
    else continue;
    // Equally specific ranges: the caller contradicts itself; the higher weight is taken.
    if (!best || rank > best.rank || (rank === best.rank && r.q > best.q)) best = { rank, q: r.q };
  }
  return best?.q ?? 0;
}

/**
 * How the caller can read the endpoint's answer: JSON when it takes application/json at all (as
 * before), else an event stream when it takes text/event-stream, else null (406).
 */
export function answerType(accept: string | null): typeof ANSWER_TYPE | typeof EVENT_STREAM_TYPE | null {
  if (acceptWeight(accept, ANSWER_TYPE) > 0) return ANSWER_TYPE;
  if (acceptWeight(accept, EVENT_STREAM_TYPE) > 0) return EVENT_STREAM_TYPE;
  return null;
}

/** Whether the caller can read the endpoint's answer in either form. */
export function acceptsAnswer(accept: string | null): boolean {
  return answerType(accept) !== null;
}
