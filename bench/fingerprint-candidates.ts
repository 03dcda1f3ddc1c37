// Issue 16, session 15 (fp15): candidate normalizer rules for the misses of the fourth external set,
// measured leave-one-set-out and not adopted (bench/RESULTS.md "Session 15"); session 16 (fp16)
// measured them on a fifth set gathered after them and adopted nodepid and include as normalizer 10
// ("Session 16"). The baseline stays version 9 (frozen), so the figures compare. A candidate is version 9
// with extra line rules read before it (dropped only when something else is left) and form rules after
// it. For each candidate: the share of pairs of reports of one error sharing a normal form in each
// external set (test/fixtures/fingerprint-real-variants*.json) and its change from version 9, the
// groups wholly joined and the apart pairs that collide; the tune split (relation = same and all
// variants; only tune cases are read, nothing of the holdout split); collisions of different errors
// (the dev set's distractor pairs, tune cases of another class or code, the distractor corpus's
// strings of another class or template); and the version-9 forms a candidate splits among the texts
// outside the holdout split. `--per-group` prints each group of a set (default the fourth) under
// version 9. Which sets a candidate was written from is in RESULTS: a gain counts only on the others.
// Run: BENCH_ERROR_STRINGS=FILE node_modules/.bin/bun bench/fingerprint-candidates.ts [CANDIDATE,...] [--per-group [SET]]
import { applyGated, type GatedRule } from "../src/core/error-normalizer-v5";
import { normalizeErrorTextAt } from "../src/core/error-normalizer";
import { redactedErrorText } from "../src/core/fingerprint";
import { crossCaseCollisions, loadDevset } from "../test/support/devset";
import { loadRealVariantSets, type RealVariantSetName, type RealVariants } from "../test/support/real-variants";
import { collisionsAmong, errorLine, harvestErrorStrings } from "./lib/corpus";
import { REPO_DIR, rng } from "./lib/report";
// hint: advice a tool prints after its error (notes, help, "Please …", Node's trace hint, yarn's pointer)
const HINT_LINE: GatedRule[] = [
  // rustc / gcc / clang notes and help ("= note: ...", "note: ...", "help: ..."), PostgreSQL-style HINT
  [/^[ \t]*(?:= )?(?:note|help|hint|HINT|Hint):[ \t][^\n]*$/gm, "", /^[ \t]*(?:= )?(?:note|help|hint|HINT|Hint):/m],
  // advice sentences a tool prints after its error
  [
    /^[ \t]*(?:Please |Try |Consider |You should |You may |You can |If you |To fix |For more (?:information|details)|See |Run with |Re-run |Use `|Make sure )[^\n]*$/gm,
    "",
    /^[ \t]*(?:Please|Try|Consider|You should|You may|You can|If you|To fix|For more|See|Run with|Re-run|Use `|Make sure) /m,
  ],
  // Node's "(Use `node --trace-warnings ...` to show where the warning was created)"
  [/[ \t]*\(Use `node --trace-[a-z-]{1,30} \.\.\.` to show where the (?:warning|deprecation|error) was created\)/g, "", "node --trace-"],
  // yarn's "info Visit https://yarnpkg.com/... for documentation about this command."
  [/^[ \t]*info Visit \S{1,300} for documentation about this command\.?[ \t]*$/gm, "", "for documentation about this command"],
];
// exit: the exit lines a runner or a build tool prints after the error
const EXIT_LINE: GatedRule[] = [
  [/^[ \t]*(?:Error: )?Process completed with exit code \d{1,3}\.?[ \t]*$/gm, "", "exit code"],
  [/^[ \t]*(?:##\[error\])?(?:Error: )?The process '[^'\n]{1,300}' failed with exit code \d{1,3}[ \t]*$/gm, "", "failed with exit code"],
  [/^[ \t]*make(?:\[\d{1,3}\])?: \*\*\* [^\n]{0,300}Error \d{1,3}[ \t]*$/gm, "", "make"],
  [/^[ \t]*exit status \d{1,3}[ \t]*$/gm, "", "exit status"],
  [/^[ \t]*Process finished with exit code \d{1,3}[ \t]*$/gm, "", "Process finished"],
  [/^[ \t]*(?:error |\S{0,3}ELIFECYCLE\S{0,3} )?Command failed with exit code \d{1,3}\.?[ \t]*$/gm, "", "Command failed with exit code"],
  [/^[ \t]*compilation terminated\.[ \t]*$/gm, "", "compilation terminated"],
];
// nodepid: Node's process id before a warning ("(node:12345) Warning: ...", "(node:12345) [DEP0040] ...")
const NODE_PID: GatedRule[] = [[/\(node:\d{1,10}\)[ \t]?/g, "", "(node:"]];
// include: GCC/Clang include context ("In file included from a.c:1:", "                 from b.h:2,")
const INCLUDE_CONTEXT: GatedRule[] = [
  [/^[ \t]*In file included from [^\n]{1,500}[:,][ \t]*$/gm, "", "In file included from"],
  [/^[ \t]{2,40}from [^\n\s]{1,300}:\d{1,7}[:,][ \t]*$/gm, "", "from "],
];
// html: HTML markup and entities a web page or a rendered terminal left in the paste
const HTML: GatedRule[] = [
  [
    /<\/?(?:font|span|b|strong|i|em|code|pre|tt|kbd|div|p|a)(?:[ \t][^<>\n]{0,300})?>/g,
    "",
    /<\/?(?:font|span|b|strong|i|em|code|pre|tt|kbd|div|p|a)\b/,
  ],
  [/&quot;/g, '"', "&quot;"],
  [/&lt;/g, "<", "&lt;"],
  [/&gt;/g, ">", "&gt;"],
  [/&#39;|&#x27;/g, "'", "&#"],
  [/&amp;/g, "&", "&amp;"],
];
// prompt: a shell prompt and the command typed at it ("user@host:~/dir$ cmd", "C:\dir>cmd", "$ cmd", "➜  dir cmd", "% cmd", "# cmd")
const PROMPT: GatedRule[] = [
  [
    /^[ \t]*(?:\([\w.-]{1,40}\) )?(?:\[?[\w.-]{1,64}@[\w.-]{1,64}[: ][^\n$#>]{0,200}[\]]?[$#]|[A-Za-z]:\\[^\n>]{0,200}>|PS [A-Za-z]:\\[^\n>]{0,200}>|➜ {1,2}\S{1,100}(?: git:\([^)\n]{1,100}\))?(?: ✗)?|[$%#])[ \t]+\S[^\n]*$/gm,
    "",
    /^[ \t]*(?:\([\w.-]{1,40}\) )?(?:\[?[\w.-]{1,64}@[\w.-]{1,64}[: ]|[A-Za-z]:\\|PS |➜|[$%#][ \t])/m,
  ],
];
// progress: tool progress and banner lines (yarn, BuildKit, Gradle)
const PROGRESS: GatedRule[] = [
  [/^[ \t]*yarn (?:install|run|add) v\d[^\n]*$/gm, "", "yarn "],
  [/^[ \t]*\[\d{1,2}\/\d{1,2}\][ \t][^\n]*\.\.\.[ \t]*$/gm, "", "/"],
  [/^#\d{1,4} \d{1,6}\.\d{1,4} /gm, "", "#"],
  [
    /^[ \t]*(?:FAILURE: Build failed with an exception\.|\* What went wrong:|BUILD FAILED in [^\n]*|\* Get more help at \S{1,200})[ \t]*$/gm,
    "",
    /FAILURE: Build failed|What went wrong|BUILD FAILED|Get more help/,
  ],
  [/^\* Try:\n(?:[^\n]+\n?){1,6}/gm, "", "* Try:"],
];
// mysqlcode: MySQL's code in its wrappers read as the bare code ("SQLSTATE[HY000] [1524] ..." and "#1396 - ...")
const MYSQL_CODE: GatedRule[] = [
  [/\bSQLSTATE\[[0-9A-Z]{5}\] \[(\d{4})\] /g, "$1 ", "SQLSTATE["],
  [/(?<![^\n\s"'`])#(\d{4}) - (?=[A-Z])/g, "$1 ", "#"],
];
// soname: a shared library's soname version ("libcudart.so.10.0", "libssl.so.1.1")
const SONAME: GatedRule[] = [[/(\.so)\.\d{1,4}(?:\.\d{1,4}){0,3}\b/g, "$1.<ver>", ".so."]];

interface Candidate {
  line?: GatedRule[];
  form?: GatedRule[];
}
const CANDIDATES: Record<string, Candidate> = {
  hint: { line: HINT_LINE },
  exit: { line: EXIT_LINE },
  nodepid: { line: NODE_PID },
  include: { line: INCLUDE_CONTEXT },
  html: { line: HTML },
  prompt: { line: PROMPT },
  progress: { line: PROGRESS },
  mysqlcode: { line: MYSQL_CODE },
  soname: { line: SONAME },
};

const v9 = (text: string) => normalizeErrorTextAt(redactedErrorText(text), 9);

function normalizerOf(names: string[]): (text: string) => string {
  const chosen = names.map((n) => {
    const c = CANDIDATES[n];
    if (!c) throw new Error(`no candidate ${n} (one of ${Object.keys(CANDIDATES).join(", ")})`);
    return c;
  });
  const line = chosen.flatMap((c) => c.line ?? []);
  const form = chosen.flatMap((c) => c.form ?? []);
  const cache = new Map<string, string>();
  return (text) => {
    let r = cache.get(text);
    if (r !== undefined) return r;
    const red = redactedErrorText(text);
    const pre = line.length ? applyGated(red, line) : red;
    const base = normalizeErrorTextAt(pre.trim() === "" ? red : pre, 9);
    r = form.length ? applyGated(base, form).replace(/ {2,}/g, " ").trim() : base;
    cache.set(text, r);
    return r;
  };
}

function setFigures(set: RealVariants, norm: (text: string) => string) {
  let pairs = 0;
  let joined = 0;
  let whole = 0;
  for (const g of set.groups) {
    const forms = g.reports.map((r) => norm(r.text));
    for (let i = 0; i < forms.length; i++) {
      for (let j = i + 1; j < forms.length; j++) {
        pairs++;
        if (forms[i] === forms[j]) joined++;
      }
    }
    if (new Set(forms).size === 1) whole++;
  }
  return { pairs, joined, whole, groups: set.groups.length, collided: set.apart.filter((p) => norm(p.a) === norm(p.b)).map((p) => p.id) };
}

const args = process.argv.slice(2);
const sets = loadRealVariantSets();
if (args.includes("--per-group")) {
  const name = (args[args.indexOf("--per-group") + 1] ?? "fourth") as RealVariantSetName;
  const set = sets.find((s) => s.name === name)?.set;
  if (!set) throw new Error(`no set ${name}`);
  for (const g of set.groups) {
    const { pairs, joined } = setFigures({ ...set, groups: [g], apart: [] }, v9);
    console.log(
      `${g.id}: ${joined}/${pairs} pairs, ${new Set(g.reports.map((r) => v9(r.text))).size} forms of ${g.reports.length} reports`,
    );
  }
  process.exit(0);
}

const devset = loadDevset();
const tune = devset.cases.filter((c) => c.split === "tune");
const harvested = harvestErrorStrings(REPO_DIR);
const rand = rng(7);
const corpusLines = harvested.map((e) => errorLine(e, rand));
const readable = [
  ...tune.flatMap((c) => [c.error_line, ...c.queries.map((q) => q.text)]),
  ...devset.negatives.filter((n) => n.split === "tune").map((n) => n.text),
  ...devset.distractors.flatMap((p) => [p.a, p.b]),
  ...corpusLines,
  ...sets.flatMap(({ set }) => [...set.groups.flatMap((g) => g.reports.map((r) => r.text)), ...set.apart.flatMap((p) => [p.a, p.b])]),
];
const runs = args.filter((a) => !a.startsWith("--"));
for (const run of runs.length ? runs : ["", ...Object.keys(CANDIDATES)]) {
  const names = run.split(",").filter(Boolean);
  const norm = names.length ? normalizerOf(names) : v9;
  console.log(`candidate ${names.join("+") || "none (version 9)"}`);
  for (const { name, set } of sets) {
    const a = setFigures(set, norm);
    const b = setFigures(set, v9);
    const d = a.joined - b.joined;
    console.log(
      `  ${name} set: ${a.joined}/${a.pairs} = ${(a.joined / a.pairs).toFixed(3)} (${d >= 0 ? "+" : ""}${d} = ${(d / a.pairs).toFixed(3)}); ` +
        `groups wholly joined ${a.whole}/${a.groups} (version 9: ${b.whole}); apart pairs colliding ${a.collided.length}/${set.apart.length}` +
        (a.collided.length ? ` [${a.collided.join(" ")}]` : ""),
    );
  }
  let n = 0;
  let same = 0;
  let sameN = 0;
  let sameJoined = 0;
  for (const c of tune) {
    const e = norm(c.error_line);
    for (const q of c.queries.filter((q) => q.kind === "variant")) {
      const ok = norm(q.text) === e;
      n++;
      if (ok) same++;
      if (q.relation === "same") {
        sameN++;
        if (ok) sameJoined++;
      }
    }
  }
  console.log(
    `  tune split: relation = same ${sameJoined}/${sameN} = ${(sameJoined / sameN).toFixed(3)}; all variants ${same}/${n} = ${(same / n).toFixed(3)}`,
  );
  const distractors = devset.distractors.filter((p) => norm(p.a) === norm(p.b)).map((p) => p.id);
  const cross = crossCaseCollisions(tune, norm);
  const corpus = collisionsAmong(harvested, corpusLines.map(norm));
  console.log(
    `  collisions: distractor pairs ${distractors.length}/${devset.distractors.length}${distractors.length ? ` [${distractors.join(" ")}]` : ""}; ` +
      `tune cases of another class or code ${cross.collisions}/${cross.pairs}; corpus strings of another class ${corpus.otherClass}, of another template ${corpus.otherTemplate}`,
  );
  const byForm = new Map<string, Set<string>>();
  let changed = 0;
  for (const t of readable) {
    const old = v9(t);
    const now = norm(t);
    if (old !== now) changed++;
    const s = byForm.get(old) ?? new Set<string>();
    s.add(now);
    byForm.set(old, s);
  }
  const split = [...byForm].filter(([, v]) => v.size > 1);
  console.log(
    `  version-9 forms split among ${readable.length} texts outside the holdout split: ${split.length}; texts that change form: ${changed}`,
  );
  for (const [old, now] of split)
    console.log(`    split: ${old.slice(0, 140)}\n      -> ${[...now].map((x) => x.slice(0, 140)).join("\n      -> ")}`);
}
