// Sample trails for tests: realistic, and easy to vary.
import type { Trail } from "../../src/core/trail";

export function sampleTrail(
  overrides: { error?: string; commands?: string[]; os?: Trail["environment"]["os"]; runtimeVersion?: string; tag?: string } = {},
): Trail {
  return {
    protocol_version: "1.0",
    problem: {
      error: overrides.error ?? "ModuleNotFoundError: No module named 'yaml'",
      error_type: "ModuleNotFoundError",
      description: "Running the deploy script fails at import time on a fresh virtualenv.",
      root_cause: "PyYAML is imported as yaml but the package was not installed in the virtualenv.",
      dead_ends: [
        { attempt: "pip install yaml", result: "No matching distribution found for yaml" },
        { attempt: "Upgrading pip", result: "Same error" },
        { attempt: "Reinstalling the virtualenv", result: "Same error" },
      ],
    },
    solution: {
      summary: "Install the PyYAML distribution, which provides the yaml module.",
      steps: ["Activate the virtualenv", "Install PyYAML", "Re-run the script"],
      commands: overrides.commands ?? ["pip install PyYAML==6.0.1"],
      verification: "python -c 'import yaml' exits 0 and the deploy script runs.",
    },
    agent_info: { model: "test-model", framework: "test-framework" },
    environment: {
      os: overrides.os ?? "linux",
      arch: "x86_64",
      runtime: { name: "python", version: overrides.runtimeVersion ?? "3.11.7" },
      packages: [{ name: "pyyaml", version: "6.0.1" }],
    },
    effort: { tokens_spent: 12000, failed_attempts: 3 },
    tags: overrides.tag ? [overrides.tag] : undefined,
  } as Trail;
}

export const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

export const agent = (id: string) => ({ "X-Colony-Agent": id });

/**
 * Headers of an agent speaking from its own client address, for a colony started with
 * COLONY_TRUST_PROXY=1 (which reads the last X-Forwarded-For entry): counted outcome reports are
 * limited per address, so tests with many reporters give each one an address (198.18.0.0/15).
 */
export function agentAt(id: string): Record<string, string> {
  let h = 0;
  for (const c of id) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  return { ...agent(id), "X-Forwarded-For": `198.${18 + (h & 1)}.${(h >>> 1) & 255}.${(h >>> 9) & 255}` };
}

/**
 * A row for a store's `trails.insertQueued`, distinct by `n` (id and content hash), for store tests
 * and benchmarks that fill a queue without publishing.
 */
export function queuedTrailRow(n: number, trail: unknown, by = "a") {
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
    fingerprint: "fp",
    normalizerVersion: 2,
    contentRulesVersion: 1,
    errorType: null,
    trail: trail as Trail,
    contentHash: `h${n}`,
    author: by,
    client: by,
    createdAt: n,
  };
}
