// Reads a request body up to a limit, before anything parses it, whether or not the client sent
// Content-Length (a chunked body is counted as it streams in).
import { quotedClientText } from "../core/hidden-json";
import { ServiceError } from "../service/errors";

export const MAX_BODY_BYTES = 64 * 1024;

/** Deeper JSON is refused before parsing: JSON.parse and every walk of the value recurse. */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const COMMA = 0x2c;

/** True when arrays and objects nest deeper than `max`: one linear scan, brackets inside strings ignored. */
export function nestsDeeperThan(text: string, max: number): boolean {
  return scanJson(text, max).tooDeep;
}

/** A key an object of the text holds twice, and where that object is (a JSON pointer). */
export interface DuplicateKey {
  key: string;
  pointer: string;
}

/** One open object or array of the scan; reused for every container at its depth. */
interface Frame {
  object: boolean;
  /** The keys read so far (an object): a list while short, a set past SMALL_OBJECT_KEYS. */
  keys: string[];
  set: Set<string> | null;
  /** The last key read (an object) or the index of the current element (an array). */
  at: string | number;
  /** The next string is a key (an object, after `{` or `,`). */
  keyNext: boolean;
}

/** Keys an object holds before they are looked up in a set rather than a list. */
const SMALL_OBJECT_KEYS = 8;

const decodeKey = (raw: string): string | null => {
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return null; // not JSON: JSON.parse refuses the text itself
  }
};

/** Whether the object of `frame` has read `key` already; it is added. */
function seenBefore(frame: Frame, key: string): boolean {
  frame.at = key;
  if (frame.set !== null) {
    if (frame.set.has(key)) return true;
    frame.set.add(key);
    return false;
  }
  if (frame.keys.includes(key)) return true;
  frame.keys.push(key);
  if (frame.keys.length > SMALL_OBJECT_KEYS) frame.set = new Set(frame.keys);
  return false;
}

const pointerOf = (frames: Frame[], depth: number): string =>
  frames
    .slice(0, depth - 1)
    .map((f) => `/${String(f.at).replaceAll("~", "~0").replaceAll("/", "~1")}`)
    .join("");

/**
 * One linear scan of JSON text, strings skipped: whether arrays and objects nest deeper than
 * `maxDepth` (it stops there), and the first key an object holds twice, its escapes read
 * (`"a"` and `"\u0061"` are one key). The text is not checked to be JSON: JSON.parse does that.
 */
export function scanJson(text: string, maxDepth: number): { tooDeep: boolean; duplicate: DuplicateKey | null } {
  const frames: Frame[] = [];
  let depth = 0;
  let duplicate: DuplicateKey | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i + 1;
      for (i = start; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH)
          i++; // the escaped character cannot end the string
        else if (d === QUOTE) break;
      }
      const top = depth > 0 ? frames[depth - 1]! : null;
      if (top?.keyNext && duplicate === null) {
        top.keyNext = false;
        const key = decodeKey(text.slice(start, i));
        if (key !== null && seenBefore(top, key)) duplicate = { key, pointer: pointerOf(frames, depth) };
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth >= maxDepth) return { tooDeep: true, duplicate };
      const object = c === OPEN_BRACE;
      let frame = frames[depth];
      if (frame === undefined) {
        frame = { object, keys: [], set: null, at: 0, keyNext: object };
        frames.push(frame);
      } else {
        frame.object = object;
        frame.keys.length = 0;
        frame.set = null;
        frame.at = 0;
        frame.keyNext = object;
      }
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth > 0) depth--;
    } else if (c === COMMA && depth > 0) {
      const top = frames[depth - 1]!;
      if (top.object) top.keyNext = true;
      else (top.at as number)++;
    }
  }
  return { tooDeep: false, duplicate };
}

/** A body that is not acceptable JSON: 400 invalid_request (an MCP endpoint answers JSON-RPC's parse error). */
export class BodyParseError extends ServiceError {
  constructor(message = "the body is not valid JSON") {
    super("invalid_request", message);
  }
}

/**
 * A body whose object holds a key twice: JSON, read, and refused. It keeps what was read, so an
 * MCP door can answer the request with its id when that id is not the key held twice.
 */
export class DuplicateKeyError extends BodyParseError {
  constructor(
    message: string,
    readonly duplicate: DuplicateKey,
    readonly value: unknown,
  ) {
    super(message);
  }

  /** Whether the key held twice is the message's own `id` (which of the two was meant cannot be told). */
  get idIsTwice(): boolean {
    return this.duplicate.pointer === "" && this.duplicate.key === "id";
  }
}

/**
 * A JSON body as a value; BodyParseError when it nests too deep, DuplicateKeyError when an object holds a key twice
 * (a SyntaxError when it is not JSON). JSON.parse keeps the last of two equal keys, where a proxy,
 * a validator or a log in front of the colony may read the first (RFC 8259 §4: such an object's
 * meaning is unpredictable): `{"error":"benign","error":"…"}` would be read as two bodies.
 */
export function parseJsonBody(text: string): unknown {
  const { tooDeep, duplicate } = scanJson(text, MAX_JSON_DEPTH);
  if (tooDeep) throw new BodyParseError(`the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  const value: unknown = JSON.parse(text);
  if (duplicate) {
    throw new DuplicateKeyError(
      `the body has the key ${quotedClientText(duplicate.key)} twice in one object (at ${quotedClientText(duplicate.pointer || "/")}): send each key once`,
      duplicate,
      value,
    );
  }
  return value;
}

/** `application/json`, or a structured-syntax JSON type (`application/vnd.x+json`), parameters ignored. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]*\+)?json[ \t]*(?:;|$)/i;

/**
 * A body sent by a browser (it names its Origin, or Sec-Fetch-Site) must declare JSON: a page of
 * any site may send `text/plain`, a form encoding or no Content-Type to any address without a CORS
 * preflight, and the colony reads every body as JSON, so such a page could publish trails, report
 * outcomes and record searches on a colony only its visitors can reach. A JSON Content-Type needs
 * a preflight, which the REST routes never grant. Clients that are not browsers (curl, scripts,
 * agents) send no Origin and are not asked.
 */
export function refuseUndeclaredBrowserBody(headers: Headers): void {
  if (!headers.has("origin") && !headers.has("sec-fetch-site")) return;
  if (JSON_MEDIA_TYPE.test(headers.get("content-type") ?? "")) return;
  throw new ServiceError("invalid_request", "a request body sent by a browser must have Content-Type: application/json");
}

function isAscii(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b >= 0x80) return false;
  return true;
}

const tooLarge = () => new ServiceError("too_large", `request body is over ${MAX_BODY_BYTES / 1024} KB`);

/**
 * The charsets a JSON body may declare: UTF-8 (RFC 8259 §8.1) under any of its names and ASCII, a
 * subset of it. Besides these, every label the Encoding Standard reads as UTF-8
 * (`unicode-1-1-utf-8`, `x-unicode20utf8`, …): the UTF-16 pattern below took `unicode-1-1-utf-8`
 * for UTF-16 and refused even an ASCII body.
 */
const UTF8_CHARSETS = new Set(["utf-8", "utf8", "us-ascii", "ascii", "csutf8"]);

function namesUtf8(charset: string): boolean {
  if (UTF8_CHARSETS.has(charset)) return true;
  try {
    return new TextDecoder(charset).encoding === "utf-8";
  } catch {
    return false; // a label the Encoding Standard does not know
  }
}

/** A `charset` parameter of a Content-Type, quoted or not. */
const CHARSET_PARAMETER = /;\s*charset\s*=\s*"?([^";\s]*)/gi;

/** UTF-16 and UTF-32 under their names: no byte of such a body reads as the same text in UTF-8. */
const WIDE_CHARSET = /^(?:utf-?(?:16|32)|ucs-?[24]|unicode)/;

/**
 * A body is read as UTF-8 (invalid bytes as U+FFFD). One in another charset would be stored
 * changed, without a word: `caf\xe9` declared ISO-8859-1 became `caf\ufffd` in a trail; and one
 * in UTF-16 only failed as "not valid JSON". Both are refused, naming the charset. A body of ASCII
 * bytes reads the same in any 8-bit charset (some client libraries declare ISO-8859-1 by default),
 * so only one holding other bytes is refused for an 8-bit charset.
 */
function refuseForeignCharset(headers: Headers, body: Uint8Array): void {
  const charsets = [...(headers.get("content-type") ?? "").matchAll(CHARSET_PARAMETER)].map((m) => m[1]!.toLowerCase());
  const shown = (charset: string) => charset.replace(/[^a-z0-9._:+-]/g, "").slice(0, 40);
  // Declared twice, differently: the colony read the first, a proxy or validator in front may read
  // the last (one body, two readings, as a JSON key held twice).
  if (new Set(charsets.map((c) => (namesUtf8(c) ? "utf-8" : c))).size > 1) {
    const names = charsets.slice(0, 4).map(shown).join(", ");
    throw new ServiceError(
      "invalid_request",
      `the body must be UTF-8 JSON; its Content-Type declares charset more than once (${names}): declare it once`,
    );
  }
  const declared = charsets[0];
  if (declared !== undefined && !namesUtf8(declared) && (WIDE_CHARSET.test(declared) || !isAscii(body))) {
    throw new ServiceError("invalid_request", `the body must be UTF-8 JSON; its Content-Type declares charset=${shown(declared)}`);
  }
  if ((body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xfe && body[1] === 0xff)) {
    throw new ServiceError("invalid_request", "the body is UTF-16 (it starts with a byte order mark): send it as UTF-8");
  }
}

export async function readBodyLimited(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (!/^\d+$/.test(declared.trim())) throw new ServiceError("invalid_request", "Content-Length is not a number");
    if (Number(declared) > limit) throw tooLarge();
  }
  if (!request.body) return null;
  // Bodies are read as sent: a compressed one would only fail later as "not valid JSON".
  const encoding = request.headers.get("content-encoding")?.trim();
  if (encoding && encoding.toLowerCase() !== "identity") {
    throw new ServiceError("invalid_request", `Content-Encoding ${encoding.slice(0, 40)} is not supported: send the body uncompressed`);
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      // The client went away mid-body (or sent less than its Content-Length): its fault, not ours,
      // so a 400 and an ordinary request log line rather than a 500 and an error line.
      throw new ServiceError("invalid_request", "the request body ended before it was complete");
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  if (total > 0) refuseForeignCharset(request.headers, out);
  return out;
}
