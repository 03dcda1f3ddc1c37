import { describe, expect, test } from "bun:test";
import { fingerprint } from "./fingerprint.ts";
import { mergeKey, mergeKeyParts, normalizeCommand, normalizeDiff, normalizePatchPath } from "./merge-key.ts";
import type { Trail } from "./trail.ts";

const DIFF = `diff --git a/app/settings.py b/app/settings.py
index 3b18e51..a9c2f04 100644
--- a/app/settings.py
+++ b/app/settings.py
@@ -10,7 +10,7 @@ DATABASES = {
     "HOST": "localhost",
-    "PORT": 5432,
+    "PORT": 5433,
 }
`;

function trail(over: {
  error?: string;
  commands?: string[];
  patches?: { file_path: string; diff?: string }[];
  steps?: string[];
  os?: Trail["environment"]["os"];
  runtime?: { name: string; version?: string };
  summary?: string;
  model?: string;
}): Trail {
  return {
    protocol_version: "1.0",
    problem: { error: over.error ?? "Error: connect ECONNREFUSED 127.0.0.1:5432" },
    solution: {
      summary: over.summary ?? "Start PostgreSQL",
      steps: over.steps,
      commands: over.commands ?? ["sudo systemctl start postgresql"],
      code_patches: over.patches,
    },
    agent_info: { model: over.model ?? "m", framework: "f" },
    environment: { os: over.os ?? "linux", runtime: over.runtime ?? { name: "node", version: "20.11.0" } },
  };
}

const key = (o: Parameters<typeof trail>[0]) => mergeKey(trail(o));

describe("mergeKey", () => {
  test("format mk1_ + 32 hex, deterministic", () => {
    expect(key({})).toMatch(/^mk1_[0-9a-f]{32}$/);
    expect(key({})).toBe(key({}));
  });

  test("same fix for the same error on another machine: same key", () => {
    const a = key({
      error: "Error: connect ECONNREFUSED 127.0.0.1:5432",
      commands: ["sudo systemctl start postgresql"],
      runtime: { name: "node", version: "20.11.0" },
    });
    const b = key({
      error: "api-1  | Error: connect ECONNREFUSED 172.18.0.3:5433",
      commands: ["  systemctl   start postgresql "],
      runtime: { name: "nodejs", version: "v20.5.1" },
    });
    expect(a).toBe(b);
  });

  test("what does not identify the fix is ignored: summary, author, steps when there are commands", () => {
    expect(key({ summary: "other words", model: "other-model", steps: ["Check the service"] })).toBe(key({}));
  });

  test("a different solution for the same error: different key", () => {
    expect(key({ commands: ["docker compose up -d db"] })).not.toBe(key({}));
    expect(key({ commands: ["sudo systemctl start postgresql", "sudo systemctl enable postgresql"] })).not.toBe(key({}));
    expect(key({ commands: ["sudo -u postgres createuser root"] })).not.toBe(key({ commands: ["createuser root"] }));
  });

  test("command order matters", () => {
    expect(key({ commands: ["a", "b"] })).not.toBe(key({ commands: ["b", "a"] }));
  });

  test("a different error or environment: different key", () => {
    expect(key({ error: "Error: connect ETIMEDOUT 127.0.0.1:5432" })).not.toBe(key({}));
    expect(key({ os: "macos" })).not.toBe(key({}));
    expect(key({ runtime: { name: "node", version: "18.19.0" } })).not.toBe(key({}));
    expect(key({ runtime: { name: "python", version: "20.1" } })).not.toBe(key({}));
    expect(key({ runtime: { name: "node" } })).not.toBe(key({}));
    // Minor and patch versions do not matter.
    expect(key({ runtime: { name: "node", version: "20.1.0" } })).toBe(key({}));
  });

  test("patches: hunk line numbers, headers, whitespace, path spelling and order do not matter", () => {
    const moved = DIFF.replace("@@ -10,7 +10,7 @@ DATABASES = {", "@@ -42,7 +42,7 @@").replace(
      "index 3b18e51..a9c2f04",
      "index 0000000..1111111",
    );
    const spaced = moved.replace('-    "PORT": 5432,', '-  "PORT":   5432,  ').replace(/\n/g, "\r\n");
    const other = { file_path: "docker-compose.yml", diff: "@@ -1 +1 @@\n-image: postgres:15\n+image: postgres:16\n" };
    const a = key({ commands: [], patches: [{ file_path: "app/settings.py", diff: DIFF }, other] });
    const b = key({ commands: [], patches: [other, { file_path: ".\\app\\settings.py", diff: spaced }] });
    expect(a).toBe(b);
  });

  test("patches: a different change or file is a different key", () => {
    const base = key({ commands: [], patches: [{ file_path: "app/settings.py", diff: DIFF }] });
    expect(
      key({ commands: [], patches: [{ file_path: "app/settings.py", diff: DIFF.replace('+    "PORT": 5433', '+    "PORT": 6543') }] }),
    ).not.toBe(base);
    expect(key({ commands: [], patches: [{ file_path: "app/local_settings.py", diff: DIFF }] })).not.toBe(base);
    expect(key({ commands: ["sudo systemctl start postgresql"], patches: [{ file_path: "app/settings.py", diff: DIFF }] })).not.toBe(base);
  });

  test("steps-only trails merge only when their steps match", () => {
    const a = key({ commands: [], steps: ["Open Settings", "Enable the  service"] });
    expect(key({ commands: [], steps: ["open settings", "Enable the service"] })).toBe(a);
    expect(key({ commands: [], steps: ["Reinstall the driver"] })).not.toBe(a);
  });

  test("a runtime named after an Object prototype member is named in the key (session 11 audit)", () => {
    // The runtime came back as a function for "constructor" (JSON.stringify drops it, so the key
    // did not name the runtime) and as Object.prototype for "__proto__".
    expect(mergeKeyParts(trail({ runtime: { name: "constructor", version: "1.0" } })).runtime).toBe("constructor");
    expect(mergeKeyParts(trail({ runtime: { name: "__proto__", version: "1.0" } })).runtime).toBe("__proto__");
    // Both were functions, dropped alike: two runtimes shared one key.
    expect(key({ runtime: { name: "constructor", version: "1.0" } })).not.toBe(key({ runtime: { name: "toString", version: "1.0" } }));
    expect(key({ runtime: { name: "constructor", version: "1.0" } })).not.toBe(key({ runtime: { name: "__proto__", version: "1.0" } }));
  });

  test("parts expose the fingerprint and the normalized environment", () => {
    const p = mergeKeyParts(trail({ runtime: { name: "Java", version: "1.8.0_292" } }));
    expect(p.fingerprint).toBe(fingerprint("Error: connect ECONNREFUSED 127.0.0.1:5432"));
    expect(p.runtime).toBe("jvm");
    expect(p.runtime_major).toBe("8");
    expect(p.commands).toEqual(["systemctl start postgresql"]);
  });
});

describe("normalizers", () => {
  test("commands: trimmed, single-spaced, plain sudo dropped, sudo with options kept", () => {
    expect(normalizeCommand("  sudo   apt-get install -y libpq-dev ")).toBe("apt-get install -y libpq-dev");
    expect(normalizeCommand("sudo -u postgres psql")).toBe("sudo -u postgres psql");
    expect(normalizeCommand("echo sudo x")).toBe("echo sudo x");
  });
  test("patch paths", () => {
    expect(normalizePatchPath(" ./src\\a.ts ")).toBe("src/a.ts");
    expect(normalizePatchPath("b/src/a.ts")).toBe("src/a.ts");
    expect(normalizePatchPath("a")).toBe("a");
  });
  test("diffs: headers dropped, hunk headers bare, removed '-- x' lines inside a hunk kept", () => {
    expect(normalizeDiff(DIFF)).toBe('@@\n "HOST": "localhost",\n-"PORT": 5432,\n+"PORT": 5433,\n }');
    expect(normalizeDiff("@@ -1,2 +1,1 @@\n--- old comment\n keep")).toBe("@@\n--- old comment\n keep");
  });
});
