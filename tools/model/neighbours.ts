// The word-neighbour table that ships with a static model (src/embedding/word-neighbours.ts): from
// the full table of each model word's nearest words (tools/model/neighbour-table.ts, numpy, about a
// minute on one thread), pruned to what the search's coverage reads, written as MODEL_DIR/
// neighbours.txt and recorded in MODEL_DIR/manifest.json (bytes, sha256) like the model's files.
// Run after the export (tools/model/train.sh does):
//   bun tools/model/neighbours.ts MODEL_DIR [FULL_TABLE.json]   (FULL_TABLE: one already made)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { formatWordNeighbours, pruneWordNeighbours, WORD_NEIGHBOURS_FILE } from "../../src/embedding/word-neighbours";

const [dirArg, fullArg] = process.argv.slice(2);
if (!dirArg) throw new Error("usage: bun tools/model/neighbours.ts MODEL_DIR [FULL_TABLE.json]");
const dir = resolve(dirArg);
let fullFile = fullArg;
let scratch: string | null = null;
if (!fullFile) {
  scratch = mkdtempSync(join(tmpdir(), "colony-neighbours-"));
  fullFile = join(scratch, "full.json");
  const script = join(import.meta.dir, "neighbour-table.ts");
  const r = spawnSync(process.execPath, [script, fullFile, dir], { stdio: "inherit" });
  if (r.status !== 0) throw new Error("tools/model/neighbour-table.ts failed");
}
try {
  const { neighbours } = JSON.parse(readFileSync(fullFile, "utf8")) as { neighbours: Record<string, [string, number][]> };
  const text = Buffer.from(formatWordNeighbours(pruneWordNeighbours(neighbours)), "utf8");
  writeFileSync(join(dir, WORD_NEIGHBOURS_FILE), text);
  const manifestFile = join(dir, "manifest.json");
  const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { files: Record<string, { sha256: string; bytes: number }> };
  manifest.files[WORD_NEIGHBOURS_FILE] = { sha256: createHash("sha256").update(text).digest("hex"), bytes: text.length };
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`${WORD_NEIGHBOURS_FILE}: ${text.length} bytes, ${manifest.files[WORD_NEIGHBOURS_FILE].sha256}`);
} finally {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
