// Normalizer version 8, frozen: stored fingerprints computed with it must stay reproducible (aliases
// of stored trails, decisions §2). Do not change its output; the current version is
// error-normalizer.ts. Pure: no I/O. Secrets are redacted by the caller (fingerprint.ts) first.
//
// Version 8 = version 7 (error-normalizer-v7.ts, frozen; it builds on versions 6 to 1), except
// where version 7 joins different errors (the apart pairs of the external sets of real reports,
// test/fixtures/fingerprint-real-variants*.json, that versions 5 to 7 gave one form): a program's
// banner over the line that names the cause gives way to the cause, as version 5 prefers an inner
// cause to an outer wrapper; a wrapper's word that says which check or whose code failed (a
// kubelet probe's kind, the compiler's own thread in a Rust panic) is kept; and the value a message
// is about (the package npm could not find, the two sizes of Cython's binary-compatibility check)
// is kept; and a reporter's one-line sentence around the message they quote gives the quoted
// message (this one only joins). error-normalizer-v8.test.ts pins its rules; docs/fingerprint.md
// lists every rule with the reason the errors it separates are different.
//
// Every regex starts with a lookbehind, a word boundary, an anchor or a literal, and has no nested
// ambiguous quantifiers, so the pass stays linear on adversarial input.
import { normalizeErrorTextV7 } from "./error-normalizer-v7.ts";

/** A program's banner over a cause, and how to read that cause into a normal form. */
interface BannerOverCause {
  /** The banner: a line that says the program gave up, whatever the cause. */
  banner: RegExp;
  /** The cause's normal form, or undefined when the report does not hold one. */
  cause: (text: string) => string | undefined;
}

/**
 * git over HTTP(S): "RPC failed; curl 56 GnuTLS recv error (-54): …" names what the transfer died
 * of (curl's error number and its library's message); "fatal: The remote end hung up unexpectedly",
 * "fatal: early EOF", "fatal: index-pack failed", "fetch-pack: unexpected disconnect while reading
 * sideband packet" follow from it whatever it was. Version 5 drops "RPC failed; curl 56 GnuTLS
 * recv error (-54):" as context before GnuTLS's words; curl's number stays in front. HTTP/2's
 * stream number is the transfer's, not the error's.
 */
const GIT_RPC_FAILED = /\bRPC failed; (curl \d{1,3}|HTTP \d{3})\b([^\n]{0,400})/;

function gitRpcCause(text: string): string | undefined {
  const m = GIT_RPC_FAILED.exec(text);
  if (!m) return undefined;
  const code = m[1]!.toLowerCase();
  const form = normalizeErrorTextV7(`error: RPC failed; ${m[1]}${m[2]}`).replace(/\bstream \d{1,10}\b/g, "stream <n>");
  return form.includes(code) ? form : `rpc failed ${code} ${form}`;
}

/**
 * The Java launcher: "Error: Could not create the Java Virtual Machine." and "Error: A fatal
 * exception has occurred. Program will exit." follow every option or heap setting the JVM rejects;
 * the line before them says which ("Unrecognized VM option 'UseConcMarkSweepGC'", "Unrecognized
 * option: --add-opens", "Invalid maximum heap size: -Xmx4096M", "Error: VM option 'UseG1GC' is
 * experimental …", "Could not reserve enough space for object heap"). The heap size asked for is
 * the user's value.
 */
const JVM_LAUNCHER_CAUSE =
  /(?:^|[\n"'`]|(?<=[.:] ))[ \t]{0,40}((?:Error: )?(?:Unrecognized (?:VM )?option|Invalid (?:maximum|initial|minimum) heap size|Invalid thread stack size|Improperly specified VM option|VM option '[^'\n]{1,100}' is|Could not reserve enough space for|Initial heap size set to a larger value|Incompatible (?:minimum|initial) and maximum heap sizes|Conflicting collector combinations|Missing \+\/- setting for VM option|Too small (?:initial|maximum) heap)[^\n]{0,300}?)(?=[ \t]{0,8}(?:Error:? )?Could not create the Java Virtual Machine|[ \t.]{0,8}\n|[ \t.]{0,8}$)/i;

function jvmLauncherCause(text: string): string | undefined {
  const m = JVM_LAUNCHER_CAUSE.exec(text);
  if (!m) return undefined;
  return normalizeErrorTextV7(m[1]!.replace(/([ :])-Xm([sx])\d{1,9}[kmgt]?\b/gi, "$1-Xm$2<size>"));
}

/**
 * conda: "CondaHTTPError: HTTP 000 CONNECTION FAILED for url <…>" and its two hint lines are the
 * same whatever the connection died of; the exception urllib3 raised after them says what
 * (a name that did not resolve, a refused connection, a certificate, a Python without its SSL
 * module, a proxy). Each cause is read in every platform's words ("[Errno 11004] getaddrinfo
 * failed" on Windows, "[Errno -3] Temporary failure in name resolution" on Linux), as version 4
 * reads Windows' socket errors in their POSIX words; the text is read with its line breaks removed,
 * as a Windows console wraps it at 80 columns inside words.
 */
const CONDA_CAUSES: [RegExp, string][] = [
  [/\bProxyError\(|cannot connect to proxy/i, "proxy error"],
  [/SSL module is not available/i, "ssl module is not available"],
  [/certificate verify failed/i, "certificate verify failed"],
  [
    /getaddrinfo failed|failure in name resolution|name or service not known|nodename nor servname provided|no address associated with hostname|failed to resolve/i,
    "name resolution failed",
  ],
  [/connection refused|actively refused/i, "connection refused"],
  [/connection reset|forcibly closed/i, "connection reset"],
  [/timed out|timeout/i, "timed out"],
  [/\bSSLError\(/, "ssl error"],
];

function condaHttp000Cause(text: string): string | undefined {
  const at = text.search(/HTTP 000 CONNECTION FAILED/i);
  const after = text.slice(at).replace(/\r?\n/g, "");
  for (const [pattern, cause] of CONDA_CAUSES) if (pattern.test(after)) return `http 000 connection failed ${cause}`;
  return undefined;
}

/**
 * Banners over causes: when a report holds one and the cause under it, the cause identifies the
 * error (two causes under one banner are two errors with two fixes); a banner alone keeps version
 * 7's form. git's "RPC failed" line names the error wherever it stands, banner or not.
 */
const BANNERS_OVER_CAUSES: BannerOverCause[] = [
  { banner: /RPC failed; /, cause: gitRpcCause },
  { banner: /Could not create the Java Virtual Machine|A fatal exception has occurred/i, cause: jvmLauncherCause },
  { banner: /HTTP 000 CONNECTION FAILED/i, cause: condaHttp000Cause },
];

export function causeUnderBanner(text: string): string | undefined {
  for (const { banner, cause } of BANNERS_OVER_CAUSES) {
    if (!banner.test(text)) continue;
    const form = cause(text);
    if (form) return form;
  }
  return undefined;
}

/**
 * Which check, or whose code, failed, in a wrapper version 5 reads as a label: kubelet's
 * "Readiness probe failed:", "Liveness probe failed:" and "Startup probe failed:" (a failed
 * readiness probe takes the pod out of its service, a failed liveness probe restarts it: the same
 * HTTP status means another fix), and a Rust panic in the compiler's own thread ("thread 'rustc'
 * panicked at …", an internal compiler error, fixed by another toolchain) against one in the user's
 * program. The word goes in front of version 7's form, unless that form already holds it.
 */
const QUALIFIERS: [RegExp, (m: RegExpExecArray) => string][] = [
  [/\b(readiness|liveness|startup) probe failed\b/i, (m) => `${m[1]!.toLowerCase()} probe failed`],
  [/\bthread 'rustc' panicked\b/, () => "internal compiler error"],
];

export function qualify(text: string, form: string): string {
  for (const [pattern, word] of QUALIFIERS) {
    const m = pattern.exec(text);
    if (!m) continue;
    const w = word(m);
    if (!form.includes(w)) return `${w} ${form}`;
  }
  return form;
}

/**
 * The value a message is about, which version 7 folds or drops with the surroundings: the package
 * npm's registry answered 404 for (versions 2 to 7 fold the URL it asked into "<request>"; as
 * "No module named 'x'" keeps its module, another package is another error), and the two sizes of
 * Cython's binary-compatibility check ("numpy.ndarray size changed, may indicate binary
 * incompatibility. Expected 88 from C header, got 80 from PyObject": 88/80 is an extension built
 * against NumPy 1.20 or later run with an older NumPy, 96/88 one built against NumPy 2 run with
 * NumPy 1; version 3 drops the second sentence).
 */
const NPM_404_REQUEST = /\b404 Not Found\s{0,4}-\s{0,4}(GET|PUT|DELETE) https?:\/\/[^/\s'"`]{1,253}\/([^\s'"`?#]{1,300})/i;
const CYTHON_SIZE_CHECK =
  /size changed, may indicate binary incompatibility\.?\s{0,8}Expected (\d{1,5}) from C header, got (\d{1,5}) from PyObject/i;

export function keepSubject(text: string, form: string): string {
  if (form.includes("404 not found - <request>")) {
    const m = NPM_404_REQUEST.exec(text);
    if (m) {
      // A tarball ("/pkg/-/pkg-1.2.3.tgz") names its package before "/-/"; a scoped name's slash
      // is escaped ("@scope%2fname").
      const path = m[2]!.split("/-/")[0]!.replace(/%2f/gi, "/").replace(/\/+$/, "").toLowerCase();
      return form.replace("404 not found - <request>", `404 not found - ${m[1]!.toLowerCase()} ${path}`);
    }
  }
  if (form.includes("size changed may indicate binary incompatibility") && !form.includes("from c header")) {
    const m = CYTHON_SIZE_CHECK.exec(text);
    if (m) return `${form} expected ${m[1]} from c header got ${m[2]} from pyobject`;
  }
  return form;
}

/**
 * A reporter's one-line sentence around the message they quote ("I am getting error \"SqliteError:
 * database disk image is malformed\" and no images … are available", "\"TabError: inconsistent use
 * of tabs and spaces in indentation\" reported by Python", "I keep getting `Readiness probe failed:
 * …` error in gke cluster"): the quoted text is the message. Only when the words outside the quotes
 * are a reporter's (a first or second person, getting, says, shows …), and the quoted text reads as
 * an error (three words or more, an error word or a code in capitals), so a quoted command ("when I
 * run `python train.py`") or a value inside a tool's own message ("relation \"my table\" does not
 * exist") is not taken.
 */
const QUOTED_SPAN =
  /(?<=^|[\s(:,])(?:"([A-Za-z./-][^"\n]{12,400}?)"|`([A-Za-z./-][^`\n]{12,400}?)`|[\u201c\u201d]([A-Za-z./-][^\u201c\u201d"\n]{12,400}?)[\u201c\u201d])(?=$|[\s.,:;!?)])/g;
const REPORTER_WORDS =
  /\b(?:i|i'm|im|i've|we|my|me|you|getting|get|got|gets|keep|says?|said|saying|display(?:s|ed)?|shows?|showing|reported|throws?|throwing|gives?|giving)\b/i;
const ERROR_WORDS =
  /error|exception|fail|cannot|can't|could not|unable|denied|refused|invalid|not found|no such|not allowed|occurred|malformed|abort|mismatch|timed out|timeout|unexpected|undefined|missing|exceeded/i;
/** A code in capitals in front, as Redis answers ("LOADING …", "OOM …"; "-OOM …" as it is sent). */
const CAPITALS_CODE = /^-?[A-Z]{3,}\b/;

function quotedMessage(text: string): string {
  const line = text.trim();
  if (line.includes("\n") || !/["`\u201c\u201d]/.test(line)) return text;
  const oneDoublePair = (line.match(/"/g) ?? []).length === 2;
  const oneTypographicPair = (line.match(/[\u201c\u201d]/g) ?? []).length === 2;
  for (const m of line.matchAll(QUOTED_SPAN)) {
    // Double quotes nest ambiguously ("Got error: 2002: \"Can't connect … (2 \"No such file or
    // directory\")\"" quotes the system's words inside the message): only a line with one pair.
    if ((m[1] !== undefined && !oneDoublePair) || (m[3] !== undefined && !oneTypographicPair)) continue;
    const span = (m[1] ?? m[2] ?? m[3]!).trim().replace(/^-(?=[A-Z]{3,} )/, "");
    if (span.split(/\s+/).length < 3 || !(ERROR_WORDS.test(span) || CAPITALS_CODE.test(span))) continue;
    const outside = line.slice(0, m.index) + " " + line.slice(m.index + m[0].length);
    return REPORTER_WORDS.test(outside) ? span : text;
  }
  return text;
}

/**
 * The version-8 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV8(errorText: string): string {
  const text = quotedMessage(errorText);
  const cause = causeUnderBanner(text);
  if (cause !== undefined) return cause;
  return keepSubject(text, qualify(text, normalizeErrorTextV7(text)));
}
