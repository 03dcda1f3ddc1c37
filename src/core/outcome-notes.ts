// The content rules for the notes of an outcome report (docs/content-safety.md): the one place that
// says what a note goes through, both when it is reported (service/trails.ts reportOutcome) and when
// a stored note is checked again by newer rules (service/rescreen.ts rescreenOutcomeNotes). Notes
// are replies every reader of the feed sees, so they are redacted and screened for text addressed
// to the reading agent, as a trail is before it is served.
import { detectInjection, type InjectionFinding } from "./injection";
import { redactOutcomeReport } from "./redaction";
import { CUT_PLACEHOLDER, keyMaterialLeft } from "./rejection";
import type { OutcomeReport } from "./trail";

export interface ScreenedNotes {
  /** The notes after redaction, held to their schema limit (a placeholder can be longer than what it replaced). */
  text: string;
  /** The first finding of prompt-injection screening on the redacted notes; none when they pass. */
  injection?: InjectionFinding;
}

/**
 * Redacts a note and screens the result for prompt injection, with the current content rules. A
 * note still holding key material redaction cannot make safe (a bare base64 key body, a PuTTY key)
 * is cut whole, as the first pass cuts such a field of a trail (rejection.ts cutSensitiveContent).
 */
export function screenNotes(notes: string): ScreenedNotes {
  const redacted = redactOutcomeReport({ notes } as OutcomeReport).notes ?? "";
  const text = keyMaterialLeft(redacted) ? CUT_PLACEHOLDER : redacted;
  const injection = detectInjection(text)[0];
  return injection ? { text, injection } : { text };
}
