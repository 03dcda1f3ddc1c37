// The external sets of real error reports (test/fixtures/fingerprint-real-variants.json,
// fingerprint-real-variants-2.json and fingerprint-real-variants-3.json, issue 16): groups of reports
// of one error in different surroundings, and pairs of different errors that look alike. The first
// set was gathered before normalizer 6 (its rules were written from it), the second after it and the
// third after normalizer 8, each from other errors, without looking at any normalizer's output. Prints, per set and combined and per normalizer version, the
// share of report pairs within a group that share a fingerprint, how many groups are wholly joined,
// and the apart pairs that collide; then, for the current version, every group not wholly joined with
// the normal forms of its reports (these sets are not the dev set: they are for reading). Then the
// forms of older versions the current version splits among the dev set's texts and the distractor
// corpus's real error strings (counts), and which ones among the texts outside the holdout split
// (listed); last, collisions of different errors per version outside the holdout split (the
// distractor pairs, tune cases of another class or code, the corpus strings). Nothing of the holdout
// split is printed. Run: bun bench/fingerprint-real.ts [--versions 5,6,7] [--quiet] [--set first|second|third|fourth|fifth|sixth|seventh]
import { NORMALIZER_VERSION, NORMALIZER_VERSIONS, type NormalizerVersion, normalizeError } from "../src/core/fingerprint";
import { crossCaseCollisions, loadDevset } from "../test/support/devset";
import { devsetTexts, formsSplitSince, loadRealVariantSets, type RealVariants, realVariantFigures } from "../test/support/real-variants";
import { collisionsAmong, errorLine, harvestErrorStrings } from "./lib/corpus";
import { REPO_DIR, rng } from "./lib/report";
import "./lib/message-template-experiment";

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const previous = NORMALIZER_VERSIONS[NORMALIZER_VERSIONS.length - 2] as NormalizerVersion;
const versions = (arg("--versions") ?? `5,${previous},${NORMALIZER_VERSION}`)
  .split(",")
  .map(Number)
  .filter((v, i, all): v is NormalizerVersion => (NORMALIZER_VERSIONS as readonly number[]).includes(v) && all.indexOf(v) === i);
const quiet = process.argv.includes("--quiet");
const only = arg("--set");
const sets = loadRealVariantSets().filter((s) => !only || s.name === only);
const combined: RealVariants = {
  about: "all sets",
  version: 1,
  groups: sets.flatMap((s) => s.set.groups),
  apart: sets.flatMap((s) => s.set.apart),
};

for (const { name, set } of [
  ...sets.map((s) => ({ name: `${s.name} set`, set: s.set })),
  ...(sets.length > 1 ? [{ name: "all sets", set: combined }] : []),
]) {
  const reports = set.groups.reduce((n, g) => n + g.reports.length, 0);
  console.log(`${name}: ${set.groups.length} groups, ${reports} reports, ${set.apart.length} apart pairs`);
  for (const v of versions) {
    const f = realVariantFigures(set, v);
    console.log(
      `  version ${v}: same fingerprint ${f.joined}/${f.pairs} = ${(f.joined / f.pairs).toFixed(3)} of pairs within a group; ` +
        `groups wholly joined ${f.wholeGroups}/${f.groups}; apart pairs colliding ${f.collided.length}/${f.apart}` +
        (f.collided.length ? ` [${f.collided.join(" ")}]` : ""),
    );
  }
}

if (!quiet) {
  console.log(`\nmisses of version ${NORMALIZER_VERSION} (groups not wholly joined; normal form, then the report's first line):`);
  for (const g of combined.groups) {
    const forms = g.reports.map((r) => normalizeError(r.text));
    if (new Set(forms).size === 1) continue;
    console.log(`--- ${g.id} (${g.tool})`);
    g.reports.forEach((r, i) => {
      console.log(`  NF: ${forms[i]}\n      <- ${r.text.split("\n")[0]!.slice(0, 140)}`);
    });
  }
  for (const p of combined.apart) {
    if (normalizeError(p.a) !== normalizeError(p.b)) continue;
    console.log(`--- apart pair collides: ${p.id}\n  NF: ${normalizeError(p.a)}`);
  }
}

const devset = loadDevset();
const rand = rng(7);
const harvested = harvestErrorStrings(REPO_DIR);
const corpusLines = harvested.map((e) => errorLine(e, rand));
const texts = [...devsetTexts(devset), ...corpusLines];
for (const older of [...new Set<NormalizerVersion>([5, previous])]) {
  if (older === NORMALIZER_VERSION) continue;
  const { forms, split, changed } = formsSplitSince(texts, older);
  console.log(
    `version ${NORMALIZER_VERSION} against version ${older} on ${texts.length} texts (dev set and distractor corpus): ` +
      `${split} of ${forms} version-${older} forms split; ${changed} texts change form`,
  );
}

// The forms the current version splits, listed from texts without the holdout split: the tune
// split's cases, queries and negatives, the distractor pairs, the corpus strings and the external
// sets (the counts above include the holdout split; nothing of it is printed).
const tuneCases = devset.cases.filter((c) => c.split === "tune");
const readable = [
  ...tuneCases.flatMap((c) => [c.error_line, ...c.queries.map((q) => q.text)]),
  ...devset.negatives.filter((n) => n.split === "tune").map((n) => n.text),
  ...devset.distractors.flatMap((p) => [p.a, p.b]),
  ...corpusLines,
  ...combined.groups.flatMap((g) => g.reports.map((r) => r.text)),
  ...combined.apart.flatMap((p) => [p.a, p.b]),
];
const { forms, split, changed, splitForms } = formsSplitSince(readable, previous);
console.log(
  `version ${NORMALIZER_VERSION} against version ${previous} on ${readable.length} texts without the holdout split ` +
    `(tune split, distractor pairs and corpus, the external sets): ${split} of ${forms} version-${previous} forms split; ${changed} texts change form`,
);
for (const f of splitForms) console.log(`  split: ${f.older}\n    -> ${f.current.join("\n    -> ")}`);

// Collisions of different errors, per version, without the holdout split (bench/devset.bench.ts
// computes them over both splits and prints holdout figures: it is not run while tuning): the dev
// set's distractor pairs (not split), the error lines and variants of tune cases of another error
// class or code, and the distractor corpus's real error strings of another class or template.
for (const v of versions) {
  const distractors = devset.distractors.filter((p) => normalizeError(p.a, v) === normalizeError(p.b, v)).map((p) => p.id);
  const cross = crossCaseCollisions(tuneCases, (text) => normalizeError(text, v));
  const { otherClass: classCollisions, otherTemplate: templateCollisions } = collisionsAmong(
    harvested,
    corpusLines.map((line) => normalizeError(line, v)),
  );
  console.log(
    `version ${v} collisions: distractor pairs ${distractors.length}/${devset.distractors.length}${distractors.length ? ` [${distractors.join(" ")}]` : ""}; ` +
      `tune cases' error lines and variants of another class or code ${cross.collisions}/${cross.pairs}${cross.collided.size ? ` [${[...cross.collided].join(" ")}]` : ""}; ` +
      `corpus strings (${harvested.length}) of another class ${classCollisions}, of another template ${templateCollisions}`,
  );
}
