// The second stage of search (src/core/ranking.ts rerank): among the blend's best, a trail that
// covers most of the query's words beats one that only shares its rarest word. Real cases of the
// retrieval dev set's tune split (eval/devset.json), published as trails, searched by their
// hand-written paraphrases, with the stage on and off.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { trailFromCase } from "./support/case-trail";
import { startTestColony, type TestColony } from "./support/colony";
import { loadDevset } from "./support/devset";

let colony: TestColony;
const trailOf = new Map<string, string>();
const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "search-rerank-test", agentDeclared: true };
const cases = loadDevset().cases.filter((c) => c.split === "tune");

beforeAll(async () => {
  colony = await startTestColony({ COLONY_PUBLISH_LIMIT: "100000", COLONY_RATE_LIMIT: "100000" });
  for (const c of cases) {
    const body = (await colony.service.trails.publish(trailFromCase(c), { ...caller, agent: `case-author-${c.id}` })).body;
    trailOf.set(c.id, body.trail_id);
  }
  await colony.service.worker!.drain();
});
afterAll(() => colony.dispose());

const firstFor = async (query: string, reranking: boolean) => {
  colony.service.search.reranking = reranking;
  try {
    return (await colony.service.search.search({ query, limit: 3 }, caller)).results[0]?.trail_id;
  } finally {
    colony.service.search.reranking = true;
  }
};

test("a trail that explains the described error beats one sharing a rare word with it", async () => {
  // d124: the query's rarest words are shared with another container error; the words of the
  // description (windows, script, carriage returns, loop) are in this trail's root cause.
  const c = cases.find((c) => c.id === "d124")!;
  const query = c.queries.find((q) => q.kind === "paraphrase")!.text;
  expect(await firstFor(query, false)).not.toBe(trailOf.get(c.id));
  expect(await firstFor(query, true)).toBe(trailOf.get(c.id)!);
});

test("over the tune split's paraphrases, the second stage puts the right trail first more often", async () => {
  let on = 0;
  let off = 0;
  let n = 0;
  for (const c of cases) {
    for (const q of c.queries.filter((q) => q.kind === "paraphrase")) {
      n++;
      if ((await firstFor(q.text, true)) === trailOf.get(c.id)) on++;
      if ((await firstFor(q.text, false)) === trailOf.get(c.id)) off++;
    }
  }
  // Measured: 24 more right and 1 fewer among 188 (cases only, no distractors).
  expect((on - off) / n).toBeGreaterThan(0.05);
});
