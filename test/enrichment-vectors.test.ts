// A trail's vector is the same whichever trails the enrichment worker embedded with it (bench/RESULTS.md,
// Session 11): ONNX Runtime sums a padded batch of several texts in another order than one text
// alone, so the vector a trail got used to differ in its last bits with the batch the worker
// happened to claim, which depends on timing, and a near tie in search could go either way.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Caller } from "../src/service/errors";
import { startTestColony, type TestColony } from "./support/colony";
import { sampleTrail } from "./support/trails";

const caller: Caller = { address: "127.0.0.1", client: "anon-loopback", agent: "vector-author", agentDeclared: true };
const trail = sampleTrail({ error: "ModuleNotFoundError: No module named 'yaml'" });
// A longer text, so the batch holding both is padded to its length.
const longer = sampleTrail({
  error: "Error [ERR_REQUIRE_ESM]: require() of ES Module /app/node_modules/node-fetch/src/index.js not supported.",
});
longer.problem.error_type = "Error";
longer.problem.description = "A CommonJS script loads node-fetch with require after an upgrade. ".repeat(8);
longer.solution.summary = "Pin node-fetch 2, or load version 3 with a dynamic import from the CommonJS script.";

let alone: TestColony;
let batched: TestColony;
beforeAll(async () => {
  alone = await startTestColony();
  batched = await startTestColony();
});
afterAll(async () => {
  await alone?.dispose();
  await batched?.dispose();
});

/** The cosine of a fixed probe to the stored vector of trail `seq`: equal only for equal vectors. */
async function probe(colony: TestColony, seq: number): Promise<number> {
  const { vectors, embedder } = colony.subsystems;
  const [query] = await embedder!.embed(["yaml module missing in the virtualenv"]);
  return (await vectors!.similarities(query!, [seq])).get(seq)!;
}

test("a trail gets the same vector enriched alone and in one batch with a longer trail", async () => {
  const { trail_id } = (await alone.service.trails.publish(trail, caller)).body;
  await alone.service.worker!.drain();
  const seqAlone = (await alone.subsystems.store!.trails.byId(trail_id))!.seq;

  // Both jobs committed together: the worker claims them in one batch.
  const store = batched.subsystems.store!;
  const seqBatched = await store.transaction(async (tx) => {
    await batched.service.trails.insertQueued(tx, longer, caller);
    return (await batched.service.trails.insertQueued(tx, trail, caller)).seq;
  });
  await batched.service.worker!.drain();
  expect((await store.trails.bySeq(seqBatched))!.status).toBe("indexed");

  expect(await probe(batched, seqBatched)).toBe(await probe(alone, seqAlone));
});
