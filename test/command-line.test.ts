// The `colony` command as a user meets it: the ready line of `serve` and what a missing argument
// says. Real processes (`bun src/main.ts`), real loopback ports.
import { describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { spawnColony, tempDir } from "./support/colony";
import { REPO_DIR } from "./support/paths";

const text = (stream: ReadableStream<Uint8Array>) => new Response(stream).text();

/** Reads a process's stdout until its first line is complete. */
async function firstLine(stream: ReadableStream<Uint8Array>): Promise<{ line: string; rest: () => Promise<string> }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  while (!buffered.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
  }
  const nl = buffered.indexOf("\n");
  const line = nl < 0 ? buffered : buffered.slice(0, nl);
  const rest = async () => {
    let more = buffered.slice(nl + 1);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return more;
      more += decoder.decode(value, { stream: true });
    }
  };
  return { line, rest };
}

describe("colony serve with COLONY_PORT=0", () => {
  test("prints one ready line with the URL on stdout; logs stay JSON on stderr", async () => {
    const dataDir = tempDir();
    const p = spawnColony(["serve"], { COLONY_PORT: "0", COLONY_DATA_DIR: dataDir, COLONY_LOG_LEVEL: "info" });
    try {
      const { line, rest } = await firstLine(p.stdout);
      const m = /^colony listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
      expect(m).not.toBeNull();
      expect(Number(m![2])).toBeGreaterThan(0);
      // The line is printed once the colony answers: no waiting loop needed.
      const ready = await fetch(`${m![1]}/readyz`);
      expect(ready.status).toBe(200);
      p.kill("SIGTERM");
      expect(await p.exited).toBe(0);
      expect(await rest()).toBe(""); // nothing else on stdout
      const logs = (await text(p.stderr)).trim().split("\n");
      expect(logs.length).toBeGreaterThan(1);
      for (const l of logs) expect(() => JSON.parse(l)).not.toThrow();
    } finally {
      p.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

// Before, `--help` after a command was an argument like any other: an unknown option (exit 2), or
// for backup and restore a FILE (`colony backup --help` wrote a snapshot to a file named --help).
describe("colony COMMAND --help shows that command's usage, exit 0", () => {
  for (const [args, usage] of [
    [["search", "--help"], 'usage: colony search "ERROR TEXT" [--limit N] [--json]\n'],
    [["backup", "--help"], "usage: colony backup FILE\n"],
    [["restore", "-h"], "usage: colony restore FILE\n"],
    [["serve", "--help"], "usage: colony [serve]\n"],
    [["mcp", "--http", "--help"], "usage: colony mcp\n       colony mcp --http [--port N]\n"],
    [["publish", "trail.json", "--help"], "usage: colony publish FILE|- [--wait] [--json]\n"],
  ] as const) {
    test(`colony ${args.join(" ")}`, async () => {
      const dataDir = tempDir();
      try {
        const p = spawnColony([...args], { COLONY_DATA_DIR: dataDir });
        expect(await p.exited).toBe(0);
        const out = await text(p.stdout);
        expect(out).toStartWith(usage);
        expect(out).toContain("Exit codes and environment variables: colony --help.");
        expect(await text(p.stderr)).toBe("");
        expect(existsSync(join(REPO_DIR, "--help"))).toBe(false);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }

  test("after --, --help is an argument again", async () => {
    const p = spawnColony(["lookup", "--", "--help"], {});
    expect(await p.exited).toBe(2);
    expect(await text(p.stderr)).toStartWith('colony: "--help" is not a fingerprint');
  });
});

// A bad variable is one line naming it, for the client commands too: COLONY_URL and COLONY_AGENT_ID
// were followed by the command's usage line, though the command was written right.
describe("a client command with a bad COLONY_URL or COLONY_AGENT_ID: one line naming it, exit 2", () => {
  for (const [variable, value, line] of [
    [
      "COLONY_URL",
      "colony.internal:8080",
      'colony: COLONY_URL="colony.internal:8080" is not valid: COLONY_URL accepts an absolute http:// or https:// URL\n',
    ],
    ["COLONY_AGENT_ID", "x", 'colony: COLONY_AGENT_ID="x" is not valid: COLONY_AGENT_ID accepts '],
  ] as const) {
    test(`${variable}=${value} colony status`, async () => {
      const p = spawnColony(["status"], { [variable]: value });
      expect(await p.exited).toBe(2);
      const err = await text(p.stderr);
      expect(err).toStartWith(line);
      expect(err.trim().split("\n")).toHaveLength(1);
      expect(err).not.toContain("usage:");
    });
  }
});

describe("missing arguments say what is missing", () => {
  for (const [command, missing] of [
    ["backup", "backup needs FILE: the file to write the backup to"],
    ["restore", "restore needs FILE: the backup file to restore"],
  ] as const) {
    test(`colony ${command} without a file: exit 2, what is missing, the usage line`, async () => {
      const p = spawnColony([command], {});
      expect(await p.exited).toBe(2);
      const err = await text(p.stderr);
      expect(err).toBe(`colony: ${missing}\nusage: colony ${command} FILE\n`);
      expect(err).not.toContain("unknown command");
    });
  }

  test("colony backup with two files: exit 2 and the usage line", async () => {
    const p = spawnColony(["backup", "a.db", "b.db"], {});
    expect(await p.exited).toBe(2);
    expect(await text(p.stderr)).toContain("usage: colony backup FILE");
  });

  for (const [args, usage] of [
    [["version", "--json"], "usage: colony version"],
    [["--help", "serve"], "usage: colony --help"],
  ] as const) {
    test(`colony ${args.join(" ")}: an argument it does not take is exit 2 with the usage line, not ignored`, async () => {
      const p = spawnColony([...args], {});
      expect(await p.exited).toBe(2);
      expect(await text(p.stdout)).toBe("");
      expect(await text(p.stderr)).toBe(`colony: ${args[0]} takes no arguments (got ${args[1]})\n${usage}\n`);
    });
  }

  test("an unknown command: exit 2, named, with the help", async () => {
    const p = spawnColony(["frobnicate"], {});
    expect(await p.exited).toBe(2);
    const err = await text(p.stderr);
    expect(err).toStartWith("colony: unknown command: frobnicate\n");
    expect(err).toContain("colony backup FILE");
  });
});
