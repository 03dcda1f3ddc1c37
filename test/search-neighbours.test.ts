// The model's word neighbours in a search's coverage, on the production path: the static model
// loads models/default/neighbours.txt, the search service passes it to the coverage. Tune case
// d038 of the retrieval dev set: its paraphrase says "volume claim", its trail
// "PersistentVolumeClaims"; claims is claim's neighbour in the shipped table.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { lexicalCoverage } from "../src/core/confidence";
import { trailFromCase } from "./support/case-trail";
import { startTestColony, type TestColony } from "./support/colony";
import { loadDevset } from "./support/devset";

let colony: TestColony;
let trailId: string;
const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "search-neighbours-test", agentDeclared: true };
const c = loadDevset().cases.find((c) => c.split === "tune" && c.id === "d038")!;
const trail = trailFromCase(c);

beforeAll(async () => {
  colony = await startTestColony();
  trailId = (await colony.service.trails.publish(trail, { ...caller, agent: "case-author-d038" })).body.trail_id;
  await colony.service.worker!.drain();
});
afterAll(() => colony.dispose());

test("a query word counts as found through its neighbour in the search's coverage", async () => {
  const query = "statefulset pods stuck pending because the volume claim never gets a volume";
  const table = colony.subsystems.embedder?.wordNeighbours;
  expect(table?.get("claim")).toEqual(["claims", "claiming"]);
  const text = `${trail.problem.error}\n${trail.problem.root_cause ?? ""}`;
  const withNeighbours = lexicalCoverage(query, text, table);
  expect(withNeighbours).toBeGreaterThan(lexicalCoverage(query, text));
  const { explanations } = await colony.service.search.explain({ query, limit: 3 });
  const mine = explanations.find((e) => e.trail_id === trailId)!;
  expect(mine.coverage).toBeCloseTo(withNeighbours, 3);
});
