// Lookups and searches by fingerprint against a test colony, and errors whose fingerprint
// normalizer 9 changed: shared by the upgrade tests (test/normalizer-upgrade.test.ts) and the
// tests of the previous normalizers' aliases (test/previous-aliases.test.ts).
import { expect } from "bun:test";
import { EMPTY_FINGERPRINT, fingerprint } from "../../src/core/fingerprint";
import type { TestColony } from "./colony";
import { json } from "./trails";

export const lookup = async (c: TestColony, fp: string) => {
  const res = await c.fetch(`/v1/trails/by-fingerprint/${fp}`);
  return { status: res.status, body: (await res.json()) as any };
};

export const search = async (c: TestColony, query: string) =>
  (await (await c.fetch("/v1/search", json({ query, limit: 5 }))).json()) as any;

/**
 * Each error's trail (`ids`, in order) is found by lookup of its fingerprint at each of `versions`
 * (the last is the current one), and by search for its text and for every older fingerprint:
 * found once, first. An older version that read the error as nothing gave it the empty text's
 * fingerprint, which every such line shares: that one names no trail (EMPTY_FINGERPRINT).
 */
export async function expectFoundByFingerprints(c: TestColony, errors: string[], ids: string[], versions: number[]): Promise<void> {
  for (const [i, error] of errors.entries()) {
    const all = [...new Set(versions.map((v) => fingerprint(error, v as 1)))];
    if (all.includes(EMPTY_FINGERPRINT)) expect((await lookup(c, EMPTY_FINGERPRINT)).status).toBe(404);
    const fps = all.filter((fp) => fp !== EMPTY_FINGERPRINT);
    for (const fp of fps) {
      const found = await lookup(c, fp);
      expect(found.status).toBe(200);
      expect(found.body.results.map((r: any) => r.trail_id)).toEqual([ids[i]]);
    }
    for (const query of [error, ...fps.slice(0, -1)]) {
      const res = await search(c, query);
      expect(res.results[0].trail_id).toBe(ids[i]);
      expect(res.results[0].match.via).toBe("fingerprint");
      expect(res.results.filter((r: any) => r.trail_id === ids[i]).length).toBe(1);
    }
  }
}

// Version 9 splits version-8 forms on purpose: git's banner over two SSH failures becomes two
// errors (a rejected key and a rejected host key, the third external set's apart pair); and a trail
// whose fingerprint version 9 only renames (PyTorch's device-side assert with its debugging hints,
// the third set's torch-cuda-device-side-assert group).
export const V9_SPLIT: [string, string] = [
  "Cloning into 'cs220'...\ngit@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.",
  "```\nHost key verification failed.\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n\n```",
];
export const V9_RENAMED =
  "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.";

/** git's banner alone: version 9 gives it the form version 8 gave the banner over a refused key. */
export const GIT_BANNER_ALONE =
  "fatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.";
