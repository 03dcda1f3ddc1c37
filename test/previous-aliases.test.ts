// Aliases of the previous normalizers (docs/fingerprint.md): a trail stored under the current
// normalizer is found by the fingerprints the older ones give its error (a client computing one, or
// a replica of the previous release during a rolling upgrade), the trails under the fingerprint
// asked for first. Through HTTP, on every backend tools/test.sh runs (SQLite, PostgreSQL, replicas).
import { expect, test } from "bun:test";
import { fingerprint, NORMALIZER_VERSION, NORMALIZER_VERSIONS, previousNormalizerFingerprints } from "../src/core/fingerprint";
import { PREVIOUS_ALIASES_KEY } from "../src/service/refingerprint";
import { startTestColony } from "./support/colony";
import { expectFoundByFingerprints, GIT_BANNER_ALONE, lookup, search, V9_RENAMED, V9_SPLIT } from "./support/fingerprint-lookups";
import { trailRow } from "./support/trail-rows";
import { agentAt, json, sampleTrail } from "./support/trails";

// Errors whose version-1, -2 or -3 fingerprints differ from the current one (a logger prefix, a
// class in front of a message that identifies the error by itself).
const OLDER_VERSIONS_DIFFER = [
  "ERROR:app.worker:ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
  "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'",
];

// A trail first stored under the current normalizer never had an older fingerprint to keep as an
// alias; enrichment records those the previous normalizers give its error (docs/fingerprint.md,
// "Aliases of the previous normalizers"), so a client or a replica of the previous release that
// computes the fingerprint itself finds it.
test("a trail published on the current normalizer answers by the fingerprint every older version gives its error, each trail once", async () => {
  // Two whose version-8 fingerprint differs, two whose older ones do.
  const errors = [V9_RENAMED, V9_SPLIT[0], ...OLDER_VERSIONS_DIFFER];
  for (const error of errors.slice(0, 2)) expect(fingerprint(error, 8)).not.toBe(fingerprint(error));
  for (const error of errors.slice(2)) expect(previousNormalizerFingerprints(error, fingerprint(error)).length).toBeGreaterThan(0);
  const c = await startTestColony();
  try {
    const ids: string[] = [];
    for (const error of errors) ids.push(((await (await c.fetch("/v1/trails", json(sampleTrail({ error })))).json()) as any).trail_id);
    await c.service.worker!.drain();
    await expectFoundByFingerprints(c, errors, ids, [...NORMALIZER_VERSIONS]);
  } finally {
    await c.dispose();
  }
});

test("an older version's fingerprint that is another trail's current one answers with that trail first", async () => {
  const [refusedKey, refusedHostKey] = V9_SPLIT;
  const shared = fingerprint(GIT_BANNER_ALONE);
  expect(fingerprint(refusedKey, 8)).toBe(shared);
  expect(fingerprint(refusedHostKey, 8)).toBe(shared);
  const c = await startTestColony();
  try {
    const publish = async (error: string) =>
      ((await (await c.fetch("/v1/trails", json(sampleTrail({ error })))).json()) as any).trail_id as string;
    // The aliased trails first, so that neither publication order nor strength puts the banner first.
    const keyId = await publish(refusedKey);
    const hostKeyId = await publish(refusedHostKey);
    const bannerId = await publish(GIT_BANNER_ALONE);
    await c.service.worker!.drain();
    const found = (await lookup(c, shared)).body.results.map((r: any) => r.trail_id);
    // The current rules' trail first; a client of the previous release, for which the three were
    // one error, still finds the other two after it.
    expect(found[0]).toBe(bannerId);
    expect([...found].sort()).toEqual([keyId, hostKeyId, bannerId].sort());
    const byText = await search(c, GIT_BANNER_ALONE);
    expect(byText.results[0].trail_id).toBe(bannerId);
    expect(byText.results.filter((r: any) => r.trail_id === bannerId).length).toBe(1);
    // Each refused key's current fingerprint and text find its own trail only.
    for (const [error, id] of [
      [refusedKey, keyId],
      [refusedHostKey, hostKeyId],
    ] as const) {
      expect((await lookup(c, fingerprint(error))).body.results.map((r: any) => r.trail_id)).toEqual([id]);
      const res = await search(c, error);
      expect(res.results[0].trail_id).toBe(id);
      expect(res.results.filter((r: any) => r.match.via === "fingerprint").map((r: any) => r.trail_id)).toEqual([id]);
    }
  } finally {
    await c.dispose();
  }
});

test("trails indexed on the current normalizer before enrichment recorded the previous ones' fingerprints get them once, in the background", async () => {
  const errors = [V9_RENAMED, V9_SPLIT[1]];
  const c = await startTestColony();
  try {
    const ids: string[] = [];
    for (const error of errors) ids.push(((await (await c.fetch("/v1/trails", json(sampleTrail({ error })))).json()) as any).trail_id);
    await c.service.worker!.drain();
    await c.service.refingerprinting;
    // As the previous release left its store: no alias, and the pass never ran.
    await c.query("DELETE FROM fingerprint_aliases");
    await c.query("DELETE FROM kv WHERE key = $1", PREVIOUS_ALIASES_KEY);
    for (const error of errors) expect((await lookup(c, fingerprint(error, 8))).status).toBe(404); // cached now
    await c.service.recheckStoredPasses(); // as at the next start, or a minute later
    expect((await c.query("SELECT value FROM kv WHERE key = $1", PREVIOUS_ALIASES_KEY))[0].value).toBe("done");
    await expectFoundByFingerprints(c, errors, ids, [...NORMALIZER_VERSIONS]);
  } finally {
    await c.dispose();
  }
});

// The lookup caches (src/http/routes/lookup.ts) are told a trail changed by its own fingerprint;
// an answer asked by an older version's fingerprint was read through an alias under that one, and
// stayed cached (Cache-Control allows 300 s) while the trail's counts moved.
test("a lookup by an older version's fingerprint shows the trail's new counts once an outcome is reported", async () => {
  const c = await startTestColony({ COLONY_TRUST_PROXY: "1" });
  try {
    const old = fingerprint(V9_RENAMED, 8);
    expect(old).not.toBe(fingerprint(V9_RENAMED));
    const id = ((await (await c.fetch("/v1/trails", json(sampleTrail({ error: V9_RENAMED })))).json()) as any).trail_id;
    await c.service.worker!.drain();
    // Asked once per replica behind the proxy, so every replica's cache holds the answer.
    for (const _ of c.replicas) {
      const before = await lookup(c, old);
      expect(before.body.results.map((r: any) => [r.trail_id, r.outcomes.worked])).toEqual([[id, 0]]);
      expect((await lookup(c, fingerprint(V9_RENAMED))).body.results[0].outcomes.worked).toBe(0);
    }
    const report = await c.fetch(
      `/v1/trails/${id}/outcomes`,
      json({ protocol_version: "1.0", outcome: "worked" }, agentAt("alias-cache-reporter")),
    );
    expect(report.status).toBe(202);
    expect(((await report.json()) as any).counted).toBe(true);
    for (const _ of c.replicas) {
      expect((await lookup(c, fingerprint(V9_RENAMED))).body.results[0].outcomes.worked).toBe(1);
      expect((await lookup(c, old)).body.results[0].outcomes.worked).toBe(1);
    }
  } finally {
    await c.dispose();
  }
});

// The next rolling upgrade, seen from this release: a replica of a newer release publishes a trail
// under its own normalizer's fingerprint, and this release's worker (any replica's worker claims any
// job) enriches it. Before session 14 the old worker recorded no alias, so this release's replicas,
// looking up the fingerprint they compute, missed that trail until it was re-fingerprinted (closing
// notes, "rolling upgrade to a release from a previous one"). A worker of this release records every
// fingerprint it knows for the error, its own current one included.
test("a trail a newer release published and this release's worker enriches is found by every fingerprint this release gives its error", async () => {
  const error = V9_RENAMED;
  expect(fingerprint(error, 8)).not.toBe(fingerprint(error));
  // What a newer normalizer gives it: another form than any version this release knows.
  const newer = `fp1_${new Bun.CryptoHasher("sha256").update(`a newer normalizer: ${error}`).digest("hex").slice(0, 32)}`;
  const c = await startTestColony();
  try {
    const trail = sampleTrail({ error });
    const queued = await c.subsystems.store!.transaction((tx) =>
      tx.trails.insertQueued(trailRow(trail, { fingerprint: newer, normalizerVersion: NORMALIZER_VERSION + 1, createdAt: Date.now() })),
    );
    c.service.worker!.notify();
    await c.service.worker!.drain();
    expect(((await (await c.fetch(`/v1/trails/${queued.id}`)).json()) as any).status).toBe("indexed");
    for (const fp of [newer, ...NORMALIZER_VERSIONS.map((v) => fingerprint(error, v))]) {
      const found = await lookup(c, fp);
      expect({ fp, status: found.status, ids: found.body.results?.map((r: any) => r.trail_id) }).toEqual({
        fp,
        status: 200,
        ids: [queued.id],
      });
    }
  } finally {
    await c.dispose();
  }
});
