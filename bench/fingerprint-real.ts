// The external set of real error reports (test/fixtures/fingerprint-real-variants.json, issue 16):
// groups of reports of one error in different surroundings, and pairs of different errors that
// look alike. Prints, per normalizer version, the share of report pairs within a group that share a
// fingerprint, how many groups are wholly joined, and the apart pairs that collide; then, for the
// current version, every group not wholly joined with the normal forms of its reports (this set is
// not the dev set: it is for reading). Last, the check that the current version splits no pair
// version 5 joined among the dev set's texts and the distractor corpus's real error strings (version
// 6's line rules run before version 5, so it is measured, not assumed): counts only, nothing of the
// holdout split is printed. Run: bun bench/fingerprint-real.ts [--versions 5,6] [--quiet]
import { normalizeError, NORMALIZER_VERSION, NORMALIZER_VERSIONS, type NormalizerVersion } from "../src/core/fingerprint";
import { loadDevset } from "../test/support/devset";
import { devsetTexts, formsSplitSince, loadRealVariants } from "../test/support/real-variants";
import { errorLine, harvestErrorStrings } from "./lib/corpus";
import { REPO_DIR, rng } from "./lib/report";

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const versions = (arg("--versions") ?? `5,${NORMALIZER_VERSION}`)
  .split(",")
  .map(Number)
  .filter((v): v is NormalizerVersion => (NORMALIZER_VERSIONS as readonly number[]).includes(v));
const quiet = process.argv.includes("--quiet");
const set = loadRealVariants();
const reports = set.groups.reduce((n, g) => n + g.reports.length, 0);
console.log(`external set: ${set.groups.length} groups, ${reports} reports, ${set.apart.length} apart pairs`);

for (const v of versions) {
  let pairs = 0;
  let joined = 0;
  let wholeGroups = 0;
  for (const g of set.groups) {
    const forms = g.reports.map((r) => normalizeError(r.text, v));
    for (let i = 0; i < forms.length; i++) {
      for (let j = i + 1; j < forms.length; j++) {
        pairs++;
        if (forms[i] === forms[j]) joined++;
      }
    }
    if (new Set(forms).size === 1) wholeGroups++;
  }
  const collided = set.apart.filter((p) => normalizeError(p.a, v) === normalizeError(p.b, v));
  console.log(
    `version ${v}: same fingerprint ${joined}/${pairs} = ${(joined / pairs).toFixed(3)} of pairs within a group; ` +
      `groups wholly joined ${wholeGroups}/${set.groups.length}; apart pairs colliding ${collided.length}/${set.apart.length}` +
      (collided.length ? ` [${collided.map((p) => p.id).join(" ")}]` : ""),
  );
}

if (!quiet) {
  console.log(`\nmisses of version ${NORMALIZER_VERSION} (groups not wholly joined; normal form, then the report's first line):`);
  for (const g of set.groups) {
    const forms = g.reports.map((r) => normalizeError(r.text));
    if (new Set(forms).size === 1) continue;
    console.log(`--- ${g.id} (${g.tool})`);
    g.reports.forEach((r, i) => {
      console.log(`  NF: ${forms[i]}\n      <- ${r.text.split("\n")[0]!.slice(0, 140)}`);
    });
  }
  for (const p of set.apart) {
    if (normalizeError(p.a) !== normalizeError(p.b)) continue;
    console.log(`--- apart pair collides: ${p.id}\n  NF: ${normalizeError(p.a)}`);
  }
}

const devset = loadDevset();
const rand = rng(7);
const texts = [...devsetTexts(devset), ...harvestErrorStrings(REPO_DIR).map((e) => errorLine(e, rand))];
const { forms, split } = formsSplitSince(texts, 5);
console.log(
  `\nversion ${NORMALIZER_VERSION} against version 5 on ${texts.length} texts (dev set and distractor corpus): ` +
    `${split} of ${forms} version-5 forms split`,
);
