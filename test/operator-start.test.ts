// What an operator meets when a setting or a data directory is wrong: the `colony` command stops
// at start with one line naming what to fix and a non-zero exit, never a stack trace and never a
// colony listening half-working; the data is left as it was. Real processes (`bun src/main.ts`),
// real SQLite files.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";
import { loadMcpConfig } from "../src/mcp/config";
import { startStandalone } from "../src/mcp/standalone";
import { startColony } from "../src/serve";
import { backupDatabase } from "../src/store/sqlite/backup";
import { openDatabase } from "../src/store/sqlite/database";
import { DataDirLockedError, lockDataDir } from "../src/store/sqlite/lock";
import { MIGRATIONS } from "../src/store/sqlite/migrations";
import { freePort, spawnColony, tempDir } from "./support/colony";
import { REPO_DIR } from "./support/paths";

const vec = getLoadablePath();
const made: string[] = [];
const dir = (prefix?: string) => {
  const d = tempDir(prefix);
  made.push(d);
  return d;
};
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** Runs a `colony` command to its end (20 s at most: a colony that starts instead is a failure). */
async function run(args: string[], env: Record<string, string>) {
  const p = spawnColony(args, { COLONY_PORT: "0", ...env });
  const timer = setTimeout(() => p.kill("SIGKILL"), 20_000);
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const schemaVersion = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  } finally {
    db.close();
  }
};

/** A stopped colony's data directory at an older schema level (the migrations before the last). */
function olderColony(): { dataDir: string; file: string; version: number } {
  const dataDir = dir("colony-older-");
  const older = MIGRATIONS.slice(0, -1);
  openDatabase({ dataDir, sqliteVecPath: vec, migrations: older }).close();
  return { dataDir, file: join(dataDir, "colony.db"), version: Math.max(...older.map((m) => m.version)) };
}

describe("a bad variable stops every command with one line and exit 2", () => {
  for (const [args, variable] of [
    [["backup", "snapshot.db"], "COLONY_LOG_LEVEL"],
    [["restore", "snapshot.db"], "COLONY_PORT"],
    [["export", "team.bundle"], "COLONY_LOG_LEVEL"],
    [["migrate"], "COLONY_RATE_LIMIT"],
  ] as const) {
    test(`colony ${args[0]} with ${variable} wrong`, async () => {
      const cwd = dir();
      const r = await run(
        args.map((a) => (a.includes(".") ? join(cwd, a) : a)),
        { COLONY_DATA_DIR: cwd, [variable]: variable === "COLONY_LOG_LEVEL" ? "loud" : "-5" },
      );
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`colony: ${variable}=`);
      expect(lines[0]).toContain(`${variable} accepts`);
    });
  }
});

describe("colony backup and restore with COLONY_DATABASE_URL set", () => {
  test("are refused with exit 2 (they work on COLONY_DATA_DIR's file, which a PostgreSQL colony does not use); nothing is written", async () => {
    const source = dir();
    openDatabase({ dataDir: source, sqliteVecPath: vec }).close();
    const file = join(dir(), "backup.db");
    backupDatabase({ dataDir: source, sqliteVecPath: vec, file });
    const dataDir = join(dir(), "data");
    const env = { COLONY_DATA_DIR: dataDir, COLONY_DATABASE_URL: "postgres://colony@127.0.0.1:5432/colony" };
    for (const args of [
      ["restore", file],
      ["backup", join(dir(), "new.db")],
    ]) {
      const r = await run(args, env);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain(`colony: ${args[0]} works on the SQLite colony in COLONY_DATA_DIR, but COLONY_DATABASE_URL is set`);
      expect(r.stdout).toBe("");
    }
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe("colony serve refuses to start on what it cannot run, and touches nothing", () => {
  test("COLONY_DATA_DIR is a file: exit 2 naming it; the file is unchanged", async () => {
    const file = join(dir(), "not-a-directory");
    writeFileSync(file, "the operator's file");
    const r = await run(["serve"], { COLONY_DATA_DIR: file });
    expect(r.code).toBe(2);
    expect(r.stdout).not.toContain("listening");
    expect(r.stderr.trim()).toBe(
      `colony: COLONY_DATA_DIR=${file} cannot hold the colony's database: it is not a directory; set COLONY_DATA_DIR to a directory this user can create and write`,
    );
    expect(readFileSync(file, "utf8")).toBe("the operator's file");
  });

  test("COLONY_DATA_DIR cannot be created: exit 2 naming it", async () => {
    const parent = join(dir(), "a-file");
    writeFileSync(parent, "");
    const r = await run(["serve"], { COLONY_DATA_DIR: join(parent, "data") });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toStartWith(`colony: COLONY_DATA_DIR=${join(parent, "data")} cannot hold the colony's database: `);
    expect(r.stderr.trim()).toEndWith("; set COLONY_DATA_DIR to a directory this user can create and write");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("COLONY_HOST not an address of this machine: exit 2 naming the variable, not the port", async () => {
    const r = await run(["serve"], { COLONY_DATA_DIR: dir(), COLONY_HOST: "192.0.2.1" });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      "colony: COLONY_HOST=192.0.2.1 is not an address of this machine: give one of its addresses, 0.0.0.0 or :: (every address)",
    );
  });

  test("colony mcp --http on a port already taken: one line naming the port and its setting, exit 2", async () => {
    const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    try {
      const r = await run(["mcp", "--http", "--port", String(taken.port)], {});
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(
        `colony: port ${taken.port} on 127.0.0.1 is already in use by another process: stop the other process or choose another COLONY_MCP_PORT (or --port N)`,
      );
    } finally {
      await taken.stop(true);
    }
  });

  // Bun.serve with `development: false` (serverFallbacks) sets SO_REUSEPORT unless told not to, and
  // two sockets that both set it share the port: a second colony started on a colony's port
  // listened beside it, and the kernel split the requests between the two colonies.
  test("a port another colony listens on: exit 2 naming the port, not a second colony sharing it", async () => {
    const first = await startColony(loadConfig({ COLONY_DATA_DIR: dir(), COLONY_PORT: "0", COLONY_LOG_LEVEL: "silent" }));
    try {
      const r = await run(["serve"], { COLONY_DATA_DIR: dir(), COLONY_PORT: String(first.port) });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim()).toBe(
        `colony: port ${first.port} on 127.0.0.1 is already in use by another process: stop the other process or choose another COLONY_PORT`,
      );
    } finally {
      await first.stop();
    }
  });

  test("colony mcp --http on the port of another colony mcp --http: exit 2 naming the port", async () => {
    const first = startStandalone(loadMcpConfig({}), { port: 0, logger: createLogger("silent") });
    try {
      const r = await run(["mcp", "--http", "--port", String(first.port)], {});
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(
        `colony: port ${first.port} on 127.0.0.1 is already in use by another process: stop the other process or choose another COLONY_MCP_PORT (or --port N)`,
      );
    } finally {
      await first.stop();
    }
  });

  // The one failure a colony starts through (the server may come up later), so the log is where an
  // operator learns of a wrong host or port: it said "PostgreSQL did not open: Failed to connect",
  // naming no server.
  test("a COLONY_DATABASE_URL nothing answers at: the colony listens unready; its log names the database, not the password", async () => {
    const port = await freePort();
    const p = spawnColony(["serve"], {
      COLONY_PORT: "0",
      COLONY_LOG_LEVEL: "error",
      COLONY_DATA_DIR: dir(),
      COLONY_DATABASE_URL: `postgres://colony:hunter2@127.0.0.1:${port}/colony`,
    });
    try {
      const reader = p.stdout.getReader();
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      const url = /colony listening on (\S+)/.exec(out)?.[1];
      expect(url).toBeDefined();
      expect((await fetch(`${url}/readyz`)).status).toBe(503);
    } finally {
      p.kill("SIGTERM");
    }
    await p.exited;
    const logged = (await new Response(p.stderr).text()).trim().split("\n")[0]!;
    expect(JSON.parse(logged)).toMatchObject({
      msg: "PostgreSQL store failed to start; trying again in the background",
      database: `colony@127.0.0.1:${port}/colony`,
    });
    expect(logged).not.toContain("hunter2");
  });

  test("a COLONY_DATABASE_URL that can never connect (sslmode=bogus): exit 2 naming it, not a colony retrying forever", async () => {
    const r = await run(["serve"], {
      COLONY_DATA_DIR: dir(),
      COLONY_DATABASE_URL: "postgres://colony:hunter2@127.0.0.1:5432/colony?sslmode=bogus",
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toStartWith('colony: COLONY_DATABASE_URL="<hidden>" is not valid: ');
    expect(r.stderr.trim()).toEndWith("this one: sslmode=bogus is not one of disable, allow, prefer, require, verify-ca, verify-full");
    expect(r.stderr).not.toContain("hunter2");
  });

  test("a database of a newer schema: exit 2 naming the file; the file is unchanged", async () => {
    const { dataDir, file } = olderColony();
    const db = new Database(file);
    db.exec("PRAGMA user_version = 999");
    db.close();
    const before = sha256(file);
    const r = await run(["serve"], { COLONY_DATA_DIR: dataDir });
    expect(r.code).toBe(2);
    expect(r.stdout).not.toContain("listening");
    expect(r.stderr.trim()).toBe(
      `colony: the database ${file} has schema version 999, which is newer than this colony understands (${Math.max(...MIGRATIONS.map((m) => m.version))}); use a newer colony`,
    );
    expect(sha256(file)).toBe(before);
  });

  test("COLONY_MODEL_DIR without a model: exit 2 naming it; the data directory is not created", async () => {
    const dataDir = join(dir(), "data");
    const modelDir = dir("no-model-");
    const r = await run(["serve"], { COLONY_DATA_DIR: dataDir, COLONY_MODEL_DIR: modelDir });
    expect(r.code).toBe(2);
    expect(r.stdout).not.toContain("listening");
    expect(r.stderr.trim()).toStartWith(`colony: COLONY_MODEL_DIR=${modelDir} does not load: ${modelDir} holds no model Colony can run`);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(dataDir)).toBe(false);
  });

  test("COLONY_MODEL_DIR whose manifest's dim is not the graph's: exit 2 naming both (each vector was cut at the wrong place)", async () => {
    const modelDir = dir("wrong-dim-");
    const shipped = join(REPO_DIR, "models/default");
    for (const f of ["model.onnx", "tokenizer.json", "neighbours.txt"]) symlinkSync(join(shipped, f), join(modelDir, f));
    const manifest = JSON.parse(readFileSync(join(shipped, "manifest.json"), "utf8"));
    writeFileSync(join(modelDir, "manifest.json"), JSON.stringify({ ...manifest, dim: 128 }));
    const r = await run(["serve"], { COLONY_DATA_DIR: join(dir(), "data"), COLONY_MODEL_DIR: modelDir });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe(
      `colony: COLONY_MODEL_DIR=${modelDir} does not load: ${modelDir}: the model gives ${manifest.dim} numbers per text, but manifest.json says dim 128`,
    );
  });

  // A damaged copy of a static model said what the code tripped on, not what is wrong with the copy:
  // a manifest.json cut short was "tokenizer.json: only WordPiece (BERT) tokenizers are supported,
  // found no model", one without its files list "Object.entries requires that input parameter not be
  // null or undefined", a truncated tokenizer.json "JSON Parse error: Unexpected EOF".
  describe("COLONY_MODEL_DIR holding a damaged copy of a static model: exit 2, the file named, what to do", () => {
    const shipped = join(REPO_DIR, "models/default");
    const manifestText = readFileSync(join(shipped, "manifest.json"), "utf8");
    const manifest = JSON.parse(manifestText);
    const copyAgain = "copy the model directory again";
    for (const [what, damage, detail] of [
      [
        "manifest.json cut short",
        (d: string) => writeFileSync(join(d, "manifest.json"), manifestText.slice(0, manifestText.indexOf('"kind"'))),
        (d: string) => `${d}/manifest.json is not valid JSON (JSON Parse error: Property name must be a string literal): ${copyAgain}`,
      ],
      [
        "manifest.json without its files",
        (d: string) => writeFileSync(join(d, "manifest.json"), JSON.stringify({ ...manifest, files: undefined })),
        (d: string) => `${d}/manifest.json does not list model.onnx with its bytes and sha256: ${copyAgain}`,
      ],
      ["model.onnx missing", (d: string) => rmSync(join(d, "model.onnx")), (d: string) => `${d}/model.onnx is missing: ${copyAgain}`],
      [
        "model.onnx truncated",
        (d: string) => writeFileSync(join(d, "model.onnx"), readFileSync(join(shipped, "model.onnx")).subarray(0, 1000)),
        (d: string) =>
          `${d}/model.onnx is 1000 bytes, but manifest.json says ${manifest.files["model.onnx"].bytes}: a truncated or changed copy; ${copyAgain}`,
      ],
      [
        "tokenizer.json truncated",
        (d: string) => writeFileSync(join(d, "tokenizer.json"), "{"),
        (d: string) =>
          `${d}/tokenizer.json is 1 byte, but manifest.json says ${manifest.files["tokenizer.json"].bytes}: a truncated or changed copy; ${copyAgain}`,
      ],
      [
        // The word-neighbour table the manifest lists is checked as the model's files are.
        "neighbours.txt truncated",
        (d: string) => writeFileSync(join(d, "neighbours.txt"), "# colony-neighbours-1"),
        (d: string) =>
          `${d}/neighbours.txt is 21 bytes, but manifest.json says ${manifest.files["neighbours.txt"].bytes}: a truncated or changed copy; ${copyAgain}`,
      ],
    ] as const) {
      test(what, async () => {
        const modelDir = dir("damaged-model-");
        cpSync(shipped, modelDir, { recursive: true });
        damage(modelDir);
        const dataDir = join(dir(), "data");
        const r = await run(["serve"], { COLONY_DATA_DIR: dataDir, COLONY_MODEL_DIR: modelDir });
        expect(r.code).toBe(2);
        expect(r.stdout).toBe("");
        expect(r.stderr.trim()).toBe(`colony: COLONY_MODEL_DIR=${modelDir} does not load: ${detail(modelDir)}`);
        expect(existsSync(dataDir)).toBe(false);
      });
    }
  });

  test("a data directory in use: the second colony migrates nothing before it is refused", async () => {
    const { dataDir, file, version } = olderColony();
    const lock = lockDataDir(dataDir); // the running colony's hold on the directory
    try {
      const config = loadConfig({ HOME: process.env.HOME, COLONY_PORT: "0", COLONY_LOG_LEVEL: "silent", COLONY_DATA_DIR: dataDir });
      await expect(startColony(config)).rejects.toBeInstanceOf(DataDirLockedError);
      expect(schemaVersion(file)).toBe(version);
    } finally {
      lock.release();
    }
    // Once the directory is free, the same start migrates and serves.
    const config = loadConfig({ HOME: process.env.HOME, COLONY_PORT: "0", COLONY_LOG_LEVEL: "silent", COLONY_DATA_DIR: dataDir });
    const colony = await startColony(config);
    try {
      expect((await fetch(`${colony.url}/readyz`)).status).toBe(200);
    } finally {
      await colony.stop();
    }
    expect(schemaVersion(file)).toBe(Math.max(...MIGRATIONS.map((m) => m.version)));
  });
});
