// Merge identity (interface.md 3.1): a queued trail is merged into an existing one when it has
// "the same commands and patches for the same error and environment". The key is a hash of:
//   - the error's fingerprint (fp1_, so machine detail in the error line does not matter),
//   - the commands, in order, each trimmed, whitespace collapsed, a leading plain `sudo` dropped,
//   - the patches, as a sorted set of (file path, diff) with the diff's headers and hunk line
//     numbers removed and whitespace normalized,
//   - os, and runtime name + major version (through the same aliases as environment overlap),
//   - only when a trail has neither commands nor patches: its steps (case and whitespace folded),
//     so that two different steps-only fixes are not merged into one.
// A different solution for the same error gets a different key. Pure.
import { createHash } from "node:crypto";
import { fingerprint } from "./fingerprint.ts";
import { mergeKeyRuntime, runtimeMajor } from "./overlap.ts";
import type { Trail } from "./trail.ts";

export const MERGE_KEY_PREFIX = "mk1_";

const collapse = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * A command as it identifies a fix: trimmed, single-spaced, without a leading plain `sudo`
 * (whether the author needed root depends on their machine, not on the fix). `sudo` with options
 * (`sudo -u postgres ...`) is kept: the options change what runs.
 */
export function normalizeCommand(command: string): string {
  return collapse(command).replace(/^sudo (?!-)/, "");
}

/** A patch path: forward slashes, no leading "./", no git "a/" or "b/" side prefix. */
export function normalizePatchPath(path: string): string {
  return path
    .trim()
    .replace(/\\/g, "/")
    .replace(/^(?:\.\/)+/, "")
    .replace(/^[ab]\/(?=.)/, "");
}

/**
 * A unified diff as it identifies a change: file headers (diff --git, index, ---, +++) dropped,
 * hunk headers reduced to "@@" (their line numbers and the function context depend on the file's
 * version), every line's whitespace collapsed, blank lines dropped.
 */
export function normalizeDiff(diff: string): string {
  const out: string[] = [];
  let inHunk = false;
  for (const raw of diff.replace(/\r\n?/g, "\n").split("\n")) {
    if (raw.startsWith("diff --git ")) {
      inHunk = false;
      continue;
    }
    // Header lines only outside a hunk: inside one, "--- x" is a removed line "-- x".
    if (!inHunk && /^(?:index |--- |\+\+\+ |(?:new|deleted) file mode |similarity index |rename (?:from|to) )/.test(raw)) continue;
    if (raw.startsWith("@@")) {
      inHunk = true;
      out.push("@@");
      continue;
    }
    if (raw.startsWith("\\ No newline")) continue;
    const marked = raw[0] === "+" || raw[0] === "-";
    const body = collapse(marked || raw[0] === " " ? raw.slice(1) : raw);
    if (body !== "") out.push(`${marked ? raw[0] : " "}${body}`);
  }
  return out.join("\n");
}

export interface MergeKeyParts {
  fingerprint: string;
  commands: string[];
  patches: { file_path: string; diff: string }[];
  steps: string[];
  os: string;
  runtime: string;
  runtime_major: string;
}

/** The normalized parts the merge key is computed from (exposed for tests and debugging). */
export function mergeKeyParts(trail: Trail): MergeKeyParts {
  const s = trail.solution;
  const commands = (s.commands ?? []).map(normalizeCommand).filter((c) => c !== "");
  const patches = (s.code_patches ?? [])
    .map((p) => ({ file_path: normalizePatchPath(p.file_path), diff: normalizeDiff(p.diff ?? "") }))
    .map((p) => ({ p, key: `${p.file_path}\u0000${p.diff}` }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ p }) => p);
  const steps =
    commands.length === 0 && patches.length === 0 ? (s.steps ?? []).map((x) => collapse(x).toLowerCase()).filter((x) => x !== "") : [];
  const runtimeName = trail.environment.runtime.name;
  return {
    fingerprint: fingerprint(trail.problem.error),
    commands,
    patches,
    steps,
    os: trail.environment.os,
    runtime: mergeKeyRuntime(runtimeName),
    runtime_major: runtimeMajor(trail.environment.runtime.version, runtimeName) ?? "",
  };
}

/** "mk1_" + 32 hex: equal for trails with the same fix for the same error and environment. */
export function mergeKey(trail: Trail): string {
  const canonical = JSON.stringify(mergeKeyParts(trail));
  return MERGE_KEY_PREFIX + createHash("sha256").update(canonical, "utf8").digest("hex").slice(0, 32);
}
