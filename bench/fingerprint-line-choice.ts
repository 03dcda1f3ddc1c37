// Issue 16: a learned choice of the error line in a pasted block (bench/lib/error-line-choice.ts; an
// experiment of session 11, not adopted: bench/RESULTS.md "Session 11").
// Trains the two logistic models (pick a line, keep its form) on the external sets of real reports
// (test/fixtures/fingerprint-real-variants*.json: a group's target is its reports' most common
// version-8 form) and on the dev set's tune split (a variant of relation `same` targets its case's
// error-line form; a case's own multi-line error line targets its own form); never on the holdout
// split. Prints first the ceiling (reports for which some line of the block gives the target), then
// cross-validated figures (5 folds by group or case: a report is scored by models trained without
// its group), then the model trained on everything (its weights with --weights, the forms it
// changes with --list-final), the collisions it adds, and its CPU cost.
// Run: node_modules/.bin/bun bench/fingerprint-line-choice.ts [--weights]
import {
  type BlockLine,
  blockFormIsLine,
  candidateLines,
  chooseErrorForm,
  type LineChoiceModel,
  type LogisticModel,
  keepFeatures,
  lineFeatures,
  logistic,
  pickLine,
} from "./lib/error-line-choice";
import { normalizeErrorTextAt } from "../src/core/error-normalizer";
import { causeUnderBanner, keepSubject, qualify } from "../src/core/error-normalizer-v8";
import { redactedErrorText } from "../src/core/fingerprint";
import { crossCaseCollisions, loadDevset } from "../test/support/devset";
import { loadRealVariantSets } from "../test/support/real-variants";
import { collisionsAmong, errorLine, harvestErrorStrings } from "./lib/corpus";
import { REPO_DIR, rng } from "./lib/report";

/** The rules the model sits on: version 8 (the block's form and each line's form). */
const BASE = 8 as const;
const base = (text: string) => normalizeErrorTextAt(text, BASE);
/**
 * A line's form: the line normalized alone, then what version 8 reads from the whole report (the
 * value a message is about, which check failed), so that choosing a line keeps them.
 */
const lineFormIn = (text: string) => (line: string) => keepSubject(text, qualify(text, base(line)));
/** A report in which version 8 found a cause under a banner keeps that form: the rules chose. */
const rulesChose = (text: string) => causeUnderBanner(text) !== undefined || /^[ \t]*=[ \t]*note:/m.test(text);

interface Example {
  /** Where it comes from ("first", "second", "tune") and its group or case, the CV unit. */
  source: "first" | "second" | "tune";
  group: string;
  text: string;
  target: string;
  blockForm: string;
  lines: BlockLine[];
  lineForms: string[];
  lineFeats: number[][];
}

function example(source: Example["source"], group: string, raw: string, target: string): Example {
  const text = redactedErrorText(raw);
  const blockForm = base(text);
  const multi = text.includes("\n") && !rulesChose(text);
  const lines = multi ? candidateLines(text) : [];
  const formOfLine = lineFormIn(text);
  return {
    source,
    group,
    text,
    target,
    blockForm,
    lines,
    lineForms: lines.map((l) => (l.text === "" ? "" : formOfLine(l.raw))),
    lineFeats: lines.map((_, i) => lineFeatures(lines, i)),
  };
}

function mostCommon(forms: string[]): string {
  const counts = new Map<string, number>();
  for (const f of forms) counts.set(f, (counts.get(f) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].length - b[0].length || (a[0] < b[0] ? -1 : 1))[0]![0];
}

const examples: Example[] = [];
for (const { name, set } of loadRealVariantSets(["first", "second"])) {
  for (const g of set.groups) {
    const target = mostCommon(g.reports.map((r) => base(redactedErrorText(r.text))));
    for (const r of g.reports) examples.push(example(name as "first" | "second", `${name}:${g.id}`, r.text, target));
  }
}
const devset = loadDevset();
for (const c of devset.cases.filter((c) => c.split === "tune")) {
  const target = base(redactedErrorText(c.error_line));
  examples.push(example("tune", c.id, c.error_line, target));
  for (const q of c.queries.filter((q) => q.kind === "variant" && q.relation === "same"))
    examples.push(example("tune", c.id, q.text, target));
}

// ---- the ceiling: a block whose own form misses its target, but one of its lines gives it.
for (const source of ["first", "second", "tune"] as const) {
  const xs = examples.filter((e) => e.source === source);
  const missed = xs.filter((e) => e.blockForm !== e.target);
  const byLine = missed.filter((e) => e.lineForms.includes(e.target));
  const byWindow = missed.filter((e) => {
    if (e.lineForms.includes(e.target)) return false;
    for (let w = 2; w <= 4; w++)
      for (let i = 0; i + w <= e.lines.length; i++)
        if (
          base(
            e.lines
              .slice(i, i + w)
              .map((l) => l.raw)
              .join("\n"),
          ) === e.target
        )
          return true;
    return false;
  });
  console.log(
    `ceiling ${source}: ${xs.length} texts (${xs.filter((e) => e.lines.length > 1).length} blocks), ${missed.length} miss their target; ` +
      `a single line of the block gives it for ${byLine.length}, a window of 2-4 lines for ${byWindow.length} more`,
  );
}

// ---- logistic regression: full-batch gradient descent, L2, positives weighted; deterministic.
const L2 = Number(process.env.L2 ?? 0.01);
const MAX_POSITIVE_WEIGHT = Number(process.env.MAX_POSITIVE_WEIGHT ?? 20);

function train(rows: number[][], labels: boolean[], l2 = L2, iterations = 1500, rate = 1): number[] {
  const dim = rows[0]!.length;
  const w = new Array<number>(dim).fill(0);
  const positives = labels.filter(Boolean).length;
  const posWeight = positives > 0 ? Math.min(MAX_POSITIVE_WEIGHT, (labels.length - positives) / positives) : 1;
  const totalWeight = labels.reduce((s, y) => s + (y ? posWeight : 1), 0);
  for (let it = 0; it < iterations; it++) {
    const grad = new Array<number>(dim).fill(0);
    for (let r = 0; r < rows.length; r++) {
      const x = rows[r]!;
      let z = 0;
      for (let k = 0; k < dim; k++) z += w[k]! * x[k]!;
      const p = 1 / (1 + Math.exp(-z));
      const y = labels[r] ? 1 : 0;
      const weight = labels[r] ? posWeight : 1;
      for (let k = 0; k < dim; k++) grad[k]! += (weight * (p - y) * x[k]!) / totalWeight;
    }
    for (let k = 0; k < dim; k++) w[k]! -= rate * (grad[k]! + (k === 0 ? 0 : l2 * w[k]!));
  }
  return w.map((x) => Number(x.toFixed(4)));
}

const PICK_THRESHOLD = Number(process.env.PICK_THRESHOLD ?? 0.3);
const KEEP_THRESHOLD = Number(process.env.KEEP_THRESHOLD ?? 0.6);

function fit(trainSet: Example[]): LineChoiceModel {
  const rows: number[][] = [];
  const labels: boolean[] = [];
  for (const e of trainSet) {
    e.lineFeats.forEach((f, i) => {
      if (e.lines[i]!.text === "") return;
      rows.push(f);
      labels.push(e.lineForms[i] === e.target);
    });
  }
  const pick: LogisticModel = { weights: train(rows, labels), threshold: PICK_THRESHOLD };
  const keepRows: number[][] = [];
  const keepLabels: boolean[] = [];
  for (const e of trainSet) {
    // Every line that reads as the error, not only the top one, so the keep model sees enough cases.
    e.lines.forEach((l, i) => {
      const form = e.lineForms[i]!;
      if (l.text === "" || form === "" || form === e.blockForm) return;
      const score = logistic(pick, e.lineFeats[i]!);
      if (score < PICK_THRESHOLD) return;
      keepRows.push(keepFeatures(score, e.lines, i, form, e.blockForm));
      keepLabels.push(form === e.target && e.blockForm !== e.target);
    });
  }
  return { pick, keep: { weights: train(keepRows, keepLabels), threshold: KEEP_THRESHOLD } };
}

function chosenForm(e: Example, model: LineChoiceModel): string {
  if (e.lines.length < 2) return e.blockForm;
  const picked = pickLine(e.lines, model.pick);
  if (!picked || picked.score < model.pick.threshold || blockFormIsLine(e.lines[picked.index]!, e.blockForm)) return e.blockForm;
  const form = e.lineForms[picked.index]!;
  if (form === "" || form === e.blockForm) return e.blockForm;
  const keep = keepFeatures(picked.score, e.lines, picked.index, form, e.blockForm);
  return logistic(model.keep, keep) >= model.keep.threshold ? form : e.blockForm;
}

const foldOf = (group: string) => {
  let h = 2166136261;
  for (let i = 0; i < group.length; i++) h = Math.imul(h ^ group.charCodeAt(i), 16777619) >>> 0;
  return h % 5;
};

function pairRate(forms: Map<string, string[]>): [number, number] {
  let joined = 0;
  let pairs = 0;
  for (const fs of forms.values())
    for (let i = 0; i < fs.length; i++)
      for (let j = i + 1; j < fs.length; j++) {
        pairs++;
        if (fs[i] === fs[j]) joined++;
      }
  return [joined, pairs];
}

function report(label: string, formOf: (e: Example) => string) {
  const parts: string[] = [];
  for (const source of ["first", "second"] as const) {
    const groups = new Map<string, string[]>();
    for (const e of examples.filter((x) => x.source === source)) groups.set(e.group, [...(groups.get(e.group) ?? []), formOf(e)]);
    const [j, p] = pairRate(groups);
    parts.push(`${source} ${j}/${p} = ${(j / p).toFixed(3)}`);
  }
  // Tune: variants of relation same (each case's first example is its error line).
  const tune = examples.filter((e) => e.source === "tune");
  let same = 0;
  let hits = 0;
  const caseForm = new Map<string, string>();
  for (const e of tune) {
    if (!caseForm.has(e.group)) {
      caseForm.set(e.group, formOf(e));
      continue;
    }
    same++;
    if (formOf(e) === caseForm.get(e.group)) hits++;
  }
  const changed = examples.filter((e) => formOf(e) !== e.blockForm);
  const away = changed.filter((e) => e.blockForm === e.target);
  const bySource = (["first", "second", "tune"] as const).map((s) => `${s} ${away.filter((e) => e.source === s).length}`).join(", ");
  const broke = changed.filter((e) => e.blockForm === e.target).length;
  const fixed = changed.filter((e) => formOf(e) === e.target).length;
  console.log(
    `${label}: ${parts.join(", ")}, tune same ${hits}/${same} = ${(hits / same).toFixed(3)}; forms changed ${changed.length} (to the target ${fixed}, away from it ${broke}: ${bySource})`,
  );
}

report("version 8", (e) => e.blockForm);
const ceiling = (e: Example) => (e.blockForm !== e.target && e.lineForms.includes(e.target) ? e.target : e.blockForm);
report("ceiling (a perfect line choice)", ceiling);

const cvForm = new Map<Example, string>();
// Of the texts a perfect choice would fix, how many the pick model's top line (cross-validated) is
// one that gives the target, and how many the keep model then accepts.
let fixable = 0;
let pickedRight = 0;
for (let fold = 0; fold < 5; fold++) {
  const model = fit(examples.filter((e) => foldOf(e.group) !== fold));
  for (const e of examples.filter((x) => foldOf(x.group) === fold)) {
    cvForm.set(e, chosenForm(e, model));
    if (e.blockForm === e.target || !e.lineForms.includes(e.target)) continue;
    fixable++;
    const picked = pickLine(e.lines, model.pick);
    if (picked && e.lineForms[picked.index] === e.target) pickedRight++;
    if (process.argv.includes("--fixable")) {
      const right = e.lineForms.indexOf(e.target);
      console.log(
        `fixable ${e.group}: picked line ${picked?.index} (${picked?.score.toFixed(2)}), the target's line ${right}; chosen ${cvForm.get(e) === e.target ? "right" : "wrong"}\n  block ${e.blockForm}\n  want  ${e.target}\n  raw   ${e.text.slice(0, 400).replace(/\n/g, "⏎")}`,
      );
    }
  }
}
console.log(
  `cross-validated pick: of ${fixable} texts a line would fix, the top-scored line gives the target for ${pickedRight}; ` +
    `the choice fixes ${[...cvForm].filter(([e, f]) => f === e.target && e.blockForm !== e.target).length}`,
);
report(`cross-validated (5 folds by group; pick >= ${PICK_THRESHOLD}, keep >= ${KEEP_THRESHOLD})`, (e) => cvForm.get(e)!);
if (process.argv.includes("--list")) {
  for (const e of examples) {
    const f = cvForm.get(e)!;
    if (f === e.blockForm) continue;
    console.log(
      `${f === e.target ? "FIXED" : e.blockForm === e.target ? "BROKE" : "OTHER"} ${e.group}\n  was ${e.blockForm}\n  now ${f}\n  want ${e.target}`,
    );
    if (process.argv.includes("--raw")) console.log(`  raw ${e.text.slice(0, 600).replace(/\n/g, "⏎")}`);
  }
}

// Leave one source out: a model trained on the other two sources only, applied to the third (the
// harder question: does a choice learned from one kind of reports carry over to another?).
const lossForm = new Map<Example, string>();
for (const held of ["first", "second", "tune"] as const) {
  const model = fit(examples.filter((e) => e.source !== held));
  for (const e of examples.filter((x) => x.source === held)) lossForm.set(e, chosenForm(e, model));
}
report("leave one source out (first, second, tune each scored by a model trained on the other two)", (e) => lossForm.get(e)!);

const final = fit(examples);
report("trained on all (in sample)", (e) => chosenForm(e, final));
if (process.argv.includes("--list-final")) {
  for (const e of examples) {
    const f = chosenForm(e, final);
    if (f !== e.blockForm)
      console.log(
        `${f === e.target ? "FIXED" : e.blockForm === e.target ? "BROKE" : "OTHER"} ${e.group}\n  was ${e.blockForm}\n  now ${f}`,
      );
  }
}
if (process.argv.includes("--weights")) console.log(JSON.stringify(final));

// ---- different errors the trained model must keep apart, against version 8: the external sets'
// apart pairs, the dev set's distractor pairs, tune cases of another class or code, the corpus.
const withModel = (raw: string) => {
  const text = redactedErrorText(raw);
  return rulesChose(text) ? base(text) : chooseErrorForm(text, base(text), lineFormIn(text), final);
};
const plain = (raw: string) => base(redactedErrorText(raw));
const apart = loadRealVariantSets(["first", "second"]).flatMap((s) => s.set.apart);
const harvested = harvestErrorStrings(REPO_DIR);
const rand = rng(7);
const corpusLines = harvested.map((e) => errorLine(e, rand));
const tuneCases = devset.cases.filter((c) => c.split === "tune");
for (const [label, f] of [
  ["version 8", plain],
  ["with the model", withModel],
] as const) {
  const collided = apart.filter((p) => f(p.a) === f(p.b)).map((p) => p.id);
  const distractors = devset.distractors.filter((p) => f(p.a) === f(p.b));
  for (const p of distractors)
    console.log(`  distractor pair ${p.id} collides: ${f(p.a)}\n    a: ${p.a.replace(/\n/g, "⏎")}\n    b: ${p.b.replace(/\n/g, "⏎")}`);
  const cross = crossCaseCollisions(tuneCases, f);
  const corpus = collisionsAmong(harvested, corpusLines.map(f));
  console.log(
    `${label} collisions: apart pairs ${collided.length}/${apart.length}${collided.length ? ` [${collided.join(" ")}]` : ""}; distractor pairs ${distractors.length}/${devset.distractors.length}; ` +
      `tune cross-case ${cross.collisions}/${cross.pairs}; corpus strings (${harvested.length}) of another class ${corpus.otherClass}, of another template ${corpus.otherTemplate}`,
  );
}

// ---- CPU per text, redaction included, interleaved rounds: on this bench's texts (both external
// sets and the tune split's error lines and variants: more than half are blocks) and on the tune
// split's error lines and queries of every kind (bench/normalizer.bench.ts's mix without the holdout
// split: about a third are blocks).
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
function cpuPerText(texts: string[]): { plain: number; model: number } {
  const total = { plain: 0, model: 0 };
  for (let round = 0; round < 6; round++) {
    const order: ["plain" | "model", (t: string) => string][] = [
      ["plain", plain],
      ["model", withModel],
    ];
    if (round % 2 === 1) order.reverse();
    for (const [key, f] of order) {
      const c0 = cpuMs();
      for (const t of texts) f(t);
      if (round > 0) total[key] += cpuMs() - c0; // round 0 warms up
    }
  }
  return { plain: (total.plain * 1000) / (5 * texts.length), model: (total.model * 1000) / (5 * texts.length) };
}
for (const [label, texts] of [
  ["this bench's texts", examples.map((e) => e.text)],
  ["tune error lines and queries", tuneCases.flatMap((c) => [c.error_line, ...c.queries.map((q) => q.text)])],
] as const) {
  const blocks = texts.filter((t) => t.trim().includes("\n")).length;
  const { plain: a, model: b } = cpuPerText([...texts]);
  console.log(
    `CPU per text, ${label} (${texts.length}, ${blocks} blocks; 5 rounds after a warm-up): version 8 ${a.toFixed(1)} µs, with the model ${b.toFixed(1)} µs (${b >= a ? "+" : ""}${(((b - a) / a) * 100).toFixed(0)}%)`,
  );
}
