// The external sets of real error reports (test/fixtures/fingerprint-real-variants.json and
// fingerprint-real-variants-2.json, issue 16): groups of reports of one error in different
// surroundings, and pairs of different errors that look alike. The first set was gathered before
// normalizer 6 (its rules were written from it), the second after it, from other errors, without
// looking at any normalizer's output. Prints, per set and combined and per normalizer version, the
// share of report pairs within a group that share a fingerprint, how many groups are wholly joined,
// and the apart pairs that collide; then, for the current version, every group not wholly joined with
// the normal forms of its reports (these sets are not the dev set: they are for reading). Last, the
// check that the current version splits no pair an older version joined among the dev set's texts
// and the distractor corpus's real error strings: counts only, nothing of the holdout split is
// printed. Run: bun bench/fingerprint-real.ts [--versions 5,6,7] [--quiet] [--set first|second]
import { NORMALIZER_VERSION, NORMALIZER_VERSIONS, type NormalizerVersion, normalizeError } from "../src/core/fingerprint";
import { loadDevset } from "../test/support/devset";
import { devsetTexts, formsSplitSince, loadRealVariantSets, type RealVariants, realVariantFigures } from "../test/support/real-variants";
import { errorLine, harvestErrorStrings } from "./lib/corpus";
import { REPO_DIR, rng } from "./lib/report";

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
  about: "both sets",
  version: 1,
  groups: sets.flatMap((s) => s.set.groups),
  apart: sets.flatMap((s) => s.set.apart),
};

for (const { name, set } of [
  ...sets.map((s) => ({ name: `${s.name} set`, set: s.set })),
  ...(sets.length > 1 ? [{ name: "both sets", set: combined }] : []),
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
const texts = [...devsetTexts(devset), ...harvestErrorStrings(REPO_DIR).map((e) => errorLine(e, rand))];
for (const older of [...new Set<NormalizerVersion>([5, previous])]) {
  if (older === NORMALIZER_VERSION) continue;
  const { forms, split } = formsSplitSince(texts, older);
  console.log(
    `version ${NORMALIZER_VERSION} against version ${older} on ${texts.length} texts (dev set and distractor corpus): ` +
      `${split} of ${forms} version-${older} forms split`,
  );
}
