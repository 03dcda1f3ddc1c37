// The export bundle: one file, JSON lines. The first line is the manifest, every other line one
// trail. The manifest's sha256 covers the exact bytes after the manifest's newline, so a file
// damaged or cut in transit is refused before anything is imported. A checksum proves integrity,
// not origin: whoever can change the file can recompute it. `colony export` prints the whole
// file's sha256 so a team can compare it over a channel they trust.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../http/body";
import { escapeHiddenInJson } from "../core/hidden-json";
import { printable } from "./table";

export const BUNDLE_FORMAT = "colony-export";
export const BUNDLE_VERSION = 1;
/**
 * The largest bundle `colony import` reads: 1 GiB, some 300,000 trails of the usual 2-3 KB (a
 * trail is at most 64 KB). The import holds the whole file, and every trail parsed, in memory.
 */
export const MAX_BUNDLE_BYTES = 1024 ** 3;

export interface BundleManifest {
  format: typeof BUNDLE_FORMAT;
  version: typeof BUNDLE_VERSION;
  created_at: string;
  /** The colony version that wrote it. */
  source: string;
  /** Number of trail lines. */
  trails: number;
  /** Hex SHA-256 of everything after the manifest line. */
  sha256: string;
}

/** One trail line: the trail as the source colony indexed it (redacted), and its fingerprint there. */
export interface BundleEntry {
  fingerprint: string;
  category: string | null;
  trail: unknown;
}

export class BundleError extends Error {}

/** The most of a manifest's value a message shows. */
const SHOWN_CHARS = 80;

/**
 * A manifest's value as a refusal names it, on the operator's terminal: as JSON (the string "1"
 * and the number 1 differ), as the CLI prints any text from elsewhere (`printable`: an escape
 * sequence in a bundle would act on the terminal, an invisible character would hide), and cut to
 * SHOWN_CHARS.
 */
export function shownValue(value: unknown): string {
  const chars = [...printable(JSON.stringify(value) ?? String(value))];
  return chars.length > SHOWN_CHARS ? `${chars.slice(0, SHOWN_CHARS).join("")}… (${chars.length} characters)` : chars.join("");
}

const sha256 = (bytes: string | Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

/**
 * JSON with every character a person cannot see escaped (src/core/hidden-json.ts, as the MCP
 * elicitation shows a payload): DEL and the C1 controls, which `less` or `cat` of a bundle would
 * send its terminal (U+009B is CSI, U+009D OSC); format characters (bidi overrides such as U+202E,
 * zero-width and tag characters), which make a terminal or an editor show other text than the
 * file holds; U+2028/U+2029, which editors break lines at. JSON.stringify writes them all raw.
 * The escapes read back as the same characters.
 */
export function bundleJson(value: unknown): string {
  return escapeHiddenInJson(JSON.stringify(value));
}

/** The bundle's text for these entries. */
export function writeBundle(entries: readonly BundleEntry[], source: string, createdAt = new Date()): string {
  const body = entries.map((e) => `${bundleJson(e)}\n`).join("");
  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    created_at: createdAt.toISOString(),
    source,
    trails: entries.length,
    sha256: sha256(body),
  };
  return `${bundleJson(manifest)}\n${body}`;
}

/**
 * A bundle file's text, refused with a BundleError past `maxBytes`: a regular file by its size,
 * before anything is read; anything else (a pipe, a device) once it has given more. Other
 * failures (no such file, no permission) are thrown as they are.
 */
export function readBundleFile(path: string, maxBytes = MAX_BUNDLE_BYTES): string {
  const tooLarge = (size: string) =>
    new BundleError(`the file is ${size}, over the ${shownSize(maxBytes)} a bundle may hold (MAX_BUNDLE_BYTES); nothing was read`);
  const fd = openSync(path, "r");
  try {
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size > maxBytes) throw tooLarge(`${shownSize(stat.size)} (${stat.size.toLocaleString("en-US")} bytes)`);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1 << 20, maxBytes + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > maxBytes) throw tooLarge(`more than ${shownSize(maxBytes)}`);
    }
    return Buffer.concat(chunks, total).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

const shownSize = (bytes: number) =>
  bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(bytes % 1024 ** 3 === 0 ? 0 : 1)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

/** Checks the manifest and the checksum, then parses every line; throws BundleError saying what is wrong. */
export function readBundle(file: string): { manifest: BundleManifest; entries: BundleEntry[] } {
  // A byte order mark (an editor on Windows writes one) is no part of the manifest, as it is no
  // part of a request body.
  const text = file.startsWith("\ufeff") ? file.slice(1) : file;
  const nl = text.indexOf("\n");
  if (nl < 0) throw new BundleError("not a colony export: no manifest line");
  const manifestLine = text.slice(0, nl);
  if (nestsDeeperThan(manifestLine, MAX_JSON_DEPTH)) {
    throw new BundleError(`not a colony export: the first line nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let manifest: BundleManifest;
  try {
    manifest = JSON.parse(manifestLine) as BundleManifest;
  } catch {
    throw new BundleError("not a colony export: the first line is not JSON");
  }
  if (manifest?.format !== BUNDLE_FORMAT) throw new BundleError("not a colony export: the manifest has no format colony-export");
  if (manifest.version !== BUNDLE_VERSION)
    throw new BundleError(`export format version ${shownValue(manifest.version)} is not supported (this colony reads ${BUNDLE_VERSION})`);
  let body = text.slice(nl + 1);
  let actual = sha256(body);
  // A transfer that wrote every line end as CRLF (git's autocrlf, a mail client) changed nothing
  // else: JSON keeps no raw line break inside a string, so the lines read back are the same.
  if (actual !== manifest.sha256 && body.includes("\r\n") && sha256(body.replaceAll("\r\n", "\n")) === manifest.sha256) {
    body = body.replaceAll("\r\n", "\n");
    actual = manifest.sha256;
  }
  if (actual !== manifest.sha256) {
    throw new BundleError(
      `checksum mismatch: the manifest says sha256 ${shownValue(manifest.sha256)}, the content has ${actual}; the file is damaged or was changed`,
    );
  }
  const lines = body === "" ? [] : body.replace(/\n$/, "").split("\n");
  if (lines.length !== manifest.trails)
    throw new BundleError(`the manifest counts ${shownValue(manifest.trails)} trails, the file holds ${lines.length}`);
  const entries = lines.map((line, i) => {
    // A checksum proves integrity, not origin: every line is checked as a request body would be.
    if (nestsDeeperThan(line, MAX_JSON_DEPTH)) {
      throw new BundleError(`line ${i + 2} nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
    }
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      throw new BundleError(`line ${i + 2} is not JSON`);
    }
    if (!isEntry(entry)) throw new BundleError(`line ${i + 2} is not a trail entry (an object with a trail object)`);
    return entry;
  });
  return { manifest, entries };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isEntry = (v: unknown): v is BundleEntry => isObject(v) && isObject(v.trail);

/** The idempotency key of a trail: SHA-256 of its JSON with keys sorted at every level. */
export function entryKey(trail: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v as object)
              .sort()
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  return sha256(JSON.stringify(canonical(trail)));
}

export function fileSha256(bytes: Uint8Array): string {
  return sha256(bytes);
}
