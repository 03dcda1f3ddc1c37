// Stored vectors follow the model: another revision (a retrained model keeps its name and
// dimension) rebuilds the index and re-embeds every indexed trail; trails themselves stay.
import { expect, test } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR } from "./support/paths";
import { startTestColony, tempDir, type TestColony } from "./support/colony";
import { json, sampleTrail } from "./support/trails";

async function reindexed(c: TestColony): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (await c.subsystems.vectors!.needsReindex()) {
    if (Date.now() > deadline) throw new Error("re-embedding did not finish");
    await Bun.sleep(20);
  }
}

test("a retrained model under the same name re-embeds the stored trails", async () => {
  const dataDir = tempDir("colony-model-change-");
  const first = await startTestColony({ COLONY_DATA_DIR: dataDir });
  const ids: string[] = [];
  for (const error of ["KeyError: 'user_id'", "ImportError: libcuda.so.1: cannot open shared object file", "TypeError: x is undefined"]) {
    const res = await first.fetch("/v1/trails", json(sampleTrail({ error })));
    ids.push(((await res.json()) as any).trail_id);
  }
  await first.service.worker!.drain();
  await reindexed(first);
  expect(await first.subsystems.vectors!.count()).toBe(3);
  const signatureOf = (c: TestColony) => c.subsystems.store!.kv.get("vectors.signature");
  const firstSignature = await signatureOf(first);
  await first.stop();

  // The same weights under another recorded revision stand in for a retrained model.
  const retrained = join(tempDir("colony-retrained-"), "model");
  cpSync(join(REPO_DIR, "models/default"), retrained, { recursive: true });
  const manifestPath = join(retrained, "manifest.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  manifest.files["model.onnx"].sha256 = "f".repeat(64);
  writeFileSync(manifestPath, JSON.stringify(manifest));

  const second = await startTestColony({ COLONY_DATA_DIR: dataDir, COLONY_MODEL_DIR: retrained });
  try {
    expect(second.subsystems.embedder!.info.name).toBe(manifest.name);
    expect(await signatureOf(second)).not.toBe(firstSignature); // the index was rebuilt for the new revision
    await reindexed(second);
    expect(await second.subsystems.vectors!.count()).toBe(3);
    for (const id of ids) expect(((await (await second.fetch(`/v1/trails/${id}`)).json()) as any).status).toBe("indexed");
    const found = (await (await second.fetch("/v1/search", json({ query: "cuda shared library missing", limit: 3 }))).json()) as any;
    expect(found.results.map((r: any) => r.trail_id)).toContain(ids[1]);
  } finally {
    await second.stop();
  }

  // Back on the original model: same name and weights as before, another revision again.
  const third = await startTestColony({ COLONY_DATA_DIR: dataDir });
  try {
    expect(await signatureOf(third)).toBe(firstSignature);
    await reindexed(third);
    expect(await third.subsystems.vectors!.count()).toBe(3);
  } finally {
    await third.dispose();
  }
});
