// The retrieval dev set loaded into a colony, as the dev-set bench and the retrieval tuning aids
// (retrieval-sweep, -dump, -misses) all need it: same authors, same distractors, same expectations.
import type { Trail } from "../../src/core/trail";
import type { RunningColony } from "../../src/serve";
import type { Caller } from "../../src/service/errors";
import { trailFromCase } from "../../test/support/case-trail";
import type { DevCase } from "../../test/support/devset";
import { seedTrails } from "./colony";

/** The caller the dev-set queries are asked as. */
export const DEVSET_CALLER: Caller = { address: "127.0.0.1", client: "anon-loopback", agent: "bench-devset", agentDeclared: true };

/**
 * Publishes every case (each by its own author, so merges credit nobody twice), then the
 * distractors; `expected` is, per case id, the trail its queries should find: its own, or the one
 * it merged into.
 */
export async function publishDevset(colony: RunningColony, cases: DevCase[], distractors: Trail[]) {
  const service = colony.service;
  const published: { c: DevCase; id: string }[] = [];
  for (const c of cases) {
    const body = (await service.trails.publish(trailFromCase(c), { ...DEVSET_CALLER, agent: `case-author-${c.id}` })).body;
    published.push({ c, id: body.trail_id });
  }
  const seeding = await seedTrails(colony, distractors, { chunk: 2500 });
  const expected = new Map<string, string>();
  for (const p of published) {
    const s = (await service.trails.status(p.id)) as { status: string; merged_into?: string };
    expected.set(p.c.id, s.status === "merged" ? s.merged_into! : p.id);
  }
  return { published, expected, seeding };
}
