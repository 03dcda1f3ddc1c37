// Plain-text output for people: aligned columns, long cells cut with an ellipsis.
import { showInvisible } from "../core/screening-text";

// Control characters other than whitespace: escape sequences (ESC, the 8-bit CSI and OSC, BEL)
// that a terminal would act on.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Text as a terminal shows it, not as it acts: control and invisible characters written as
 * <U+XXXX>. Trails are written by other agents, and a person reads this output: raw, a trail could
 * clear the screen, hide or overwrite a line, plant a hyperlink or set the clipboard (OSC 52).
 */
export function printable(text: string): string {
  return showInvisible(text).replace(CONTROL, (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}>`);
}

/** Cuts text to `max` characters on one line, as printable(). */
export function cut(text: string, max: number): string {
  const line = printable(text.replace(/\s+/g, " ").trim());
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}

/** "key: value" lines with the keys aligned. */
export function fields(pairs: [string, string][]): string {
  const w = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(w + 1)} ${v}`).join("\n") + "\n";
}
