// The message-template experiment (bench/RESULTS.md, Session 19), switched on for this process's
// fingerprints when BENCH_MESSAGE_TEMPLATES names a mode: the normal form of a report is read from
// the template match bench/lib/message-templates.ts finds in it.
// - span, tail, line, trim: the match (span), the line from the match on (tail), the match's line
//   (line), the match widened where the message goes on (trim) is read in place of the report;
// - with "+gate": only when version 12's form of the report holds that reading's form; "+owngate":
//   besides, when every word of version 12's form is in version 12's form of the match's line;
// - splice: version 12's form of the report, with version 12's form of the match's line, when the
//   form holds it, replaced by the trim reading's form (the template trims the line version 12 read,
//   and version 12's reading of the rest of the report stands); only when the trim changes the line.
import { setExperimentalForm } from "../../src/core/error-normalizer";
import { type AnchorMode, anchoredLine } from "./message-templates";

const MODES = ["span", "tail", "line", "trim", "inline", "splice"];
const setting = process.env.BENCH_MESSAGE_TEMPLATES;
if (setting) {
  const [mode, gate] = setting.split("+") as [AnchorMode | "splice", string | undefined];
  if (!MODES.includes(mode) || (gate !== undefined && gate !== "gate" && gate !== "owngate"))
    throw new Error(`BENCH_MESSAGE_TEMPLATES is one of ${MODES.join(", ")}, with +gate or not; not ${setting}`);
  setExperimentalForm((text, v12) => {
    const anchored = anchoredLine(text, mode === "splice" ? "trim" : mode);
    if (anchored === undefined) return v12(text);
    if (mode !== "splice" && gate === undefined) return v12(anchored.reading);
    const form = v12(text);
    const part = v12(anchored.reading);
    if (part === "" || !` ${form} `.includes(` ${part} `)) return form;
    if (gate === "owngate") {
      // Only words of the match's own line are dropped: version 12's reading of the other lines stands.
      const own = new Set(v12(anchored.line).split(" "));
      if (form.split(" ").some((w) => !own.has(w))) return form;
    }
    if (mode !== "splice") return part;
    const lineForm = v12(anchored.line);
    if (part === "" || part === lineForm || !` ${lineForm} `.includes(` ${part} `)) return form;
    const at = ` ${form} `.indexOf(` ${lineForm} `);
    return at < 0 ? form : `${form.slice(0, at)}${part}${form.slice(at + lineForm.length)}`;
  });
  console.log(`(experiment: message templates, ${setting})`);
}
