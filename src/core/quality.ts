// Quality of a trail in 0..1: how complete and specific it is, so the colony can rank trails and
// refuse empty ones (rejection reason low_quality). The formula is a fixed sum of weighted parts,
// documented in docs/content-safety.md; change both together. Pure: no I/O.
import type { Trail } from "./trail.ts";

/** Trails scoring below this are rejected as low_quality. */
export const LOW_QUALITY_THRESHOLD = 0.35;

export const QUALITY_WEIGHTS = {
  error: 0.1,
  summary: 0.1,
  root_cause: 0.2,
  action: 0.25,
  verification: 0.1,
  dead_ends: 0.1,
  environment: 0.1,
  effort: 0.05,
} as const;

// Phrases that say nothing about the fix.
const VAGUE =
  /^(?:(?:i |we )?(?:just )?(?:fixed|solved|resolved|sorted)(?: it| this| the (?:issue|bug|problem|error))?(?: now)?|(?:it |this )?works(?: now)?|it'?s (?:fixed|working|fine)(?: now)?|done|ok(?:ay)?|yes|no|none|nothing|n\/?a|idk|same|see above|as above|(?:just )?(?:try|tried|run|ran) (?:it )?again|retry|retried|restart(?:ed)?(?: it)?|reboot(?:ed)?|reinstall(?:ed)?(?: it)?|update(?:d)?(?: it)?|upgrade(?:d)?(?: it)?|problem solved|no idea|magic|unknown|todo|tbd|fix|fixed|works for me|wfm)[\s.!]*$/i;

export const isVague = (s: unknown): boolean => {
  const t = typeof s === "string" ? s.trim() : "";
  return t.length === 0 || VAGUE.test(t);
};

const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const words = (s: string) => s.trim().split(/\s+/).filter(Boolean).length;

// A concrete step names something you can type or look for: code, a flag, a path, a file, a
// version, a package-like or CamelCase identifier, an environment variable.
const CONCRETE =
  /`[^`\n]{1,200}`|(?:^|\s)--?[A-Za-z][\w-]{0,40}|[\w.-]{1,100}\/[\w.-]{1,100}|\b[\w-]{1,100}\.(?:py|js|ts|tsx|jsx|json|ya?ml|toml|cfg|conf|ini|xml|gradle|properties|lock|txt|md|sh|rs|go|java|kt|c|cc|cpp|h|hpp|mjs|cjs|env|npmrc|sql|dll|so)\b|\b\d{1,6}\.\d{1,6}(?:\.\d{1,6})?\b|\b[a-z]{1,40}\d{0,6}[-_][a-z0-9]{1,40}|\b[a-z]{1,40}[A-Z]|\b[A-Z][a-z]{1,40}[A-Z]|[=<>]|\w\(\)|\b[A-Z][A-Z0-9_]{2,}\b|@[\w/-]/;
export const isConcrete = (s: string) => !isVague(s) && CONCRETE.test(s);

// An error line that identifies something: a code, a class, a colon-separated message.
const ERRORISH = /[:[\]()]|(?:Error|Exception|Fault)\b|\b[A-Z]{2,}\d{0,6}\b|\b[EW]\d{3,}\b|\berror\b|\bfailed\b|\bnot found\b/i;

export interface QualityParts {
  error: number;
  summary: number;
  root_cause: number;
  action: number;
  verification: number;
  dead_ends: number;
  environment: number;
  effort: number;
}

/** Each part of the score, for display and for the tests that pin the formula. */
export function qualityParts(trail: Trail): QualityParts {
  const W = QUALITY_WEIGHTS;
  const p = trail.problem ?? ({} as Trail["problem"]);
  const s = trail.solution ?? ({} as Trail["solution"]);
  const env = trail.environment ?? ({} as Trail["environment"]);

  const err = String(p.error ?? "").trim();
  const error = isVague(err) ? 0 : err.length >= 12 && ERRORISH.test(err) ? W.error : W.error * 0.3;

  const sum = String(s.summary ?? "").trim();
  const summary = isVague(sum) ? 0 : words(sum) >= 4 ? W.summary : W.summary * 0.5;

  const rc = String(p.root_cause ?? "").trim();
  const root_cause = isVague(rc) ? 0 : words(rc) >= 8 ? W.root_cause : W.root_cause * 0.5;

  const steps = arr(s.steps).filter((x): x is string => typeof x === "string");
  const commands = arr(s.commands).filter((x): x is string => typeof x === "string" && !isVague(x));
  const patches = arr(s.code_patches).filter(
    (x) => x && typeof (x as { diff?: unknown }).diff === "string" && (x as { diff: string }).diff.trim().length > 0,
  );
  const action =
    commands.length > 0 || patches.length > 0 || steps.some(isConcrete)
      ? W.action
      : steps.some((x) => !isVague(x) && words(x) >= 3)
        ? W.action * 0.5
        : 0;

  const ver = String(s.verification ?? "").trim();
  const verification = !isVague(ver) && words(ver) >= 3 ? W.verification : 0;

  const ends = arr(p.dead_ends).filter(
    (d): d is { attempt: string; result?: string } =>
      !!d && typeof (d as { attempt?: unknown }).attempt === "string" && !isVague((d as { attempt: string }).attempt),
  );
  const dead_ends = ends.length === 0 ? 0 : ends.length >= 2 || ends.some((d) => !isVague(d.result)) ? W.dead_ends : W.dead_ends * 0.5;

  const environment =
    (env.runtime?.version ? 0.4 : 0) * W.environment +
    (env.os_version || env.arch ? 0.3 : 0) * W.environment +
    (arr(env.packages).length > 0 ? 0.3 : 0) * W.environment;

  const e = trail.effort;
  const effort = e && (e.tokens_spent !== undefined || e.failed_attempts !== undefined || e.duration_s !== undefined) ? W.effort : 0;

  return { error, summary, root_cause, action, verification, dead_ends, environment, effort };
}

/** The quality score in 0..1, rounded to 3 decimals (so comparisons with the threshold are exact). */
export function scoreQuality(trail: Trail): number {
  const parts = qualityParts(trail);
  const total = Object.values(parts).reduce((a, b) => a + b, 0);
  return Math.round(Math.min(1, Math.max(0, total)) * 1000) / 1000;
}
