// The curl examples of README.md ("First requests") run verbatim against a real colony on
// loopback, so they cannot rot. Each block marked `<!-- example: NAME -->` is run with bash; the
// only changes are the documented ones: http://127.0.0.1:8080 becomes this colony's address, and
// TRAIL_ID and FINGERPRINT become what the publish example answered.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestColony, type TestColony } from "./support/colony";
import { REPO_DIR } from "./support/paths";

const README_URL = "http://127.0.0.1:8080";
const EXAMPLE = /<!-- example: ([a-z-]+) -->\n```sh\n([\s\S]*?)\n```/g;

export function readmeExamples(readme: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, name, code] of readme.matchAll(EXAMPLE)) {
    if (out.has(name!)) throw new Error(`README example ${name} appears twice`);
    out.set(name!, code!);
  }
  return out;
}

const examples = readmeExamples(readFileSync(join(REPO_DIR, "README.md"), "utf8"));
const noCurl = Bun.which("curl") === null ? "curl is not on PATH" : null;
if (noCurl) console.warn(`README examples skipped: ${noCurl}`);

let colony: TestColony;
const found: { trailId?: string; fingerprint?: string } = {};

/** Runs one README block as written, with the documented substitutions; returns its JSON output. */
async function run(name: string): Promise<any> {
  const block = examples.get(name);
  if (block === undefined) throw new Error(`README.md has no example ${name}`);
  let script = block.replaceAll(README_URL, colony.url);
  if (script.includes("TRAIL_ID")) script = script.replaceAll("TRAIL_ID", found.trailId!);
  if (script.includes("FINGERPRINT")) script = script.replaceAll("FINGERPRINT", found.fingerprint!);
  // Asynchronous: the colony answering curl runs in this process.
  const p = Bun.spawn(["bash", "-euo", "pipefail", "-c", script], { stdout: "pipe", stderr: "pipe" });
  const [exit, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  expect(stderr).toBe("");
  expect(exit).toBe(0);
  return JSON.parse(stdout);
}

beforeAll(async () => {
  if (!noCurl) colony = await startTestColony();
});

afterAll(async () => {
  await colony?.dispose();
});

describe("README.md examples", () => {
  test("the README marks exactly these examples, in this order", () => {
    expect([...examples.keys()]).toEqual(["publish", "status", "search", "outcome", "lookup"]);
  });

  describe.skipIf(noCurl !== null)("run verbatim against a real colony", () => {
    test("publish: 202 queued with an id and a fingerprint", async () => {
      const body = await run("publish");
      expect(body).toMatchObject({ status: "queued" });
      expect(body.fingerprint).toMatch(/^fp1_[0-9a-f]{32}$/);
      found.trailId = body.trail_id;
      found.fingerprint = body.fingerprint;
    });

    test("status: the trail is indexed once enrichment ran", async () => {
      await colony.service.worker!.drain();
      expect(await run("status")).toMatchObject({ trail_id: found.trailId, status: "indexed" });
    });

    test("search: the published trail comes first", async () => {
      const body = await run("search");
      expect(body.results[0].trail_id).toBe(found.trailId);
    });

    test("outcome: counted, the strength moves", async () => {
      expect(await run("outcome")).toMatchObject({ trail_id: found.trailId, counted: true, outcomes: { worked: 1 } });
    });

    test("lookup: the trail by its fingerprint", async () => {
      const body = await run("lookup");
      expect(body.results[0]).toMatchObject({ trail_id: found.trailId, match: { via: "fingerprint" } });
    });
  });
});
