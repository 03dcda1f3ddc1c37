import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import {
  bundleDir,
  CACHE_KEEP_RECENT_MS,
  contentId,
  extractFiles,
  fileDigest,
  isCompiled,
  keepMarkedUsed,
  prepareNatives,
  pruneCache,
  resolveCacheRoot,
  type EmbeddedFile,
} from "./native";

const REPO = resolve(import.meta.dir, "../..");
const ORT_DIR = join(REPO, "node_modules/onnxruntime-node/bin/napi-v6/linux/x64");
// The real natives the binary embeds: the big library makes the concurrent case a real race.
const SOURCES = [getLoadablePath(), join(ORT_DIR, "onnxruntime_binding.node"), join(ORT_DIR, "libonnxruntime.so.1")];

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "colony-native-"));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function describeFiles(paths: string[]): EmbeddedFile[] {
  return paths.map((p) => ({ name: basename(p), path: p, ...fileDigest(p) }));
}

function mode(p: string): number {
  return statSync(p).mode & 0o777;
}

function sameBytes(a: string, b: string): boolean {
  return Buffer.compare(readFileSync(a), readFileSync(b)) === 0;
}

describe("extractFiles", () => {
  test("writes owner-only copies of every file into a content-hashed directory", () => {
    const manifest = join(tmp, "manifest.json");
    writeFileSync(manifest, '{"kind":"static"}');
    const files = describeFiles([...SOURCES, manifest]);
    const dir = bundleDir(join(tmp, "cache"), contentId(SOURCES));
    expect(basename(dir)).toMatch(/^natives-[0-9a-f]{16}$/);

    expect(extractFiles(files, dir).sort()).toEqual(files.map((f) => f.name).sort());
    expect(mode(dir)).toBe(0o700);
    for (const f of files) {
      const out = join(dir, f.name);
      expect(sameBytes(out, f.path)).toBe(true);
      expect(mode(out)).toBe(f.name === "manifest.json" ? 0o600 : 0o700);
    }
    expect(readdirSync(dir).sort()).toEqual(files.map((f) => f.name).sort()); // no temp files left
  });

  test("the directory name follows the contents", () => {
    const a = join(tmp, "a.so");
    writeFileSync(a, "one");
    const first = contentId([a, SOURCES[0]!]);
    expect(contentId([a, SOURCES[0]!])).toBe(first);
    writeFileSync(a, "two");
    expect(contentId([a, SOURCES[0]!])).not.toBe(first);
  });

  test("a second run over an intact cache writes nothing", () => {
    const files = describeFiles(SOURCES);
    const dir = join(tmp, "natives");
    extractFiles(files, dir);
    const before = files.map((f) => statSync(join(dir, f.name), { bigint: true }));
    expect(extractFiles(files, dir)).toEqual([]);
    const after = files.map((f) => statSync(join(dir, f.name), { bigint: true }));
    expect(after.map((s) => [s.ino, s.mtimeNs])).toEqual(before.map((s) => [s.ino, s.mtimeNs]));
  });

  test("replaces a truncated, a corrupted (same size) and a symlinked file", () => {
    const files = describeFiles(SOURCES);
    const dir = join(tmp, "natives");
    extractFiles(files, dir);
    const [vec, binding, lib] = files.map((f) => join(dir, f.name)) as [string, string, string];
    truncateSync(lib, 1000);
    const bytes = readFileSync(binding);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(binding, bytes);
    rmSync(vec);
    const decoy = join(tmp, "decoy.so");
    writeFileSync(decoy, readFileSync(SOURCES[0]!));
    symlinkSync(decoy, vec);

    expect(extractFiles(files, dir).sort()).toEqual(files.map((f) => f.name).sort());
    for (const f of files) {
      expect(statSync(join(dir, f.name)).isFile()).toBe(true);
      expect(sameBytes(join(dir, f.name), f.path)).toBe(true);
    }
    expect(existsSync(decoy)).toBe(true); // the link was replaced, not followed
  });

  test("tightens an existing directory to 0700", () => {
    const dir = join(tmp, "natives");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    extractFiles(describeFiles([SOURCES[0]!]), dir);
    expect(mode(dir)).toBe(0o700);
  });

  test("refuses a directory that belongs to another user, or a symlink in its place", () => {
    const other = join(tmp, "other");
    mkdirSync(other, { mode: 0o700 });
    const link = join(tmp, "link");
    symlinkSync(other, link);
    expect(() => extractFiles(describeFiles([SOURCES[0]!]), link)).toThrow(/not a directory/);
    if (process.getuid?.() === 0) {
      chownSync(other, 65534, 65534);
      expect(() => extractFiles(describeFiles([SOURCES[0]!]), other)).toThrow(/another user/);
    }
  });

  test("refuses a damaged source and leaves nothing behind", () => {
    const src = join(tmp, "lib.so");
    writeFileSync(src, "good contents");
    const [file] = describeFiles([src]);
    writeFileSync(src, "evil contents");
    const dir = join(tmp, "natives");
    expect(() => extractFiles([file!], dir)).toThrow(/damaged/);
    expect(readdirSync(dir)).toEqual([]);
  });

  test("two processes extracting at once both succeed and leave whole files", async () => {
    const files = describeFiles(SOURCES);
    const dir = join(tmp, "cache", "natives-race");
    const script = join(tmp, "extract.ts");
    writeFileSync(
      script,
      `import { extractFiles } from ${JSON.stringify(join(import.meta.dir, "native.ts"))};
const [files, dir, startAt] = [JSON.parse(process.argv[2]), process.argv[3], Number(process.argv[4])];
while (Date.now() < startAt) {} // both children leave the gate together
console.log(JSON.stringify(extractFiles(files, dir)));`,
    );
    const startAt = Date.now() + 700;
    const kids = [0, 1].map(() =>
      Bun.spawn([process.execPath, script, JSON.stringify(files), dir, String(startAt)], {
        stdout: "pipe",
        stderr: "pipe",
      }),
    );
    const results = await Promise.all(
      kids.map(async (k) => ({
        code: await k.exited,
        out: await new Response(k.stdout).text(),
        err: await new Response(k.stderr).text(),
      })),
    );
    for (const r of results) {
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
    }
    for (const f of files) expect(sameBytes(join(dir, f.name), f.path)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(files.map((f) => f.name).sort());
    expect(extractFiles(files, dir)).toEqual([]);
  });
});

describe("fileDigest", () => {
  test("changes with any byte and with the length", () => {
    const p = join(tmp, "f");
    writeFileSync(p, Buffer.alloc(3 << 20, 7)); // spans several chunks
    const a = fileDigest(p);
    const bytes = readFileSync(p);
    bytes[(3 << 20) - 1] = 8;
    writeFileSync(p, bytes);
    const b = fileDigest(p);
    expect(a.size).toBe(3 << 20);
    expect(b.digest).not.toBe(a.digest);
    truncateSync(p, 100);
    expect(fileDigest(p)).toEqual({ size: 100, digest: expect.stringMatching(/^[0-9a-f]{16}$/) });
  });
});

describe("resolveCacheRoot", () => {
  test("COLONY_CACHE_DIR, then XDG_CACHE_HOME/colony, then ~/.cache/colony", () => {
    expect(resolveCacheRoot({ COLONY_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe("/c");
    expect(resolveCacheRoot({ XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe("/x/colony");
    expect(resolveCacheRoot({ HOME: "/h" })).toBe("/h/.cache/colony");
    expect(resolveCacheRoot({ COLONY_CACHE_DIR: "  ", HOME: "/h" })).toBe("/h/.cache/colony");
  });
});

describe("prepareNatives from source", () => {
  test("points into node_modules and models/default and extracts nothing", () => {
    expect(isCompiled()).toBe(false);
    const cache = join(tmp, "cache");
    const paths = prepareNatives({ cacheDir: cache });
    expect(paths).toEqual({ sqliteVec: getLoadablePath(), ortDir: null, modelDir: join(REPO, "models/default") });
    expect(existsSync(cache)).toBe(false);
  });
});

describe("compressed embedded files", () => {
  test("a zstd-compressed file is extracted to the original bytes, checked by the original's digest", () => {
    const lib = join(ORT_DIR, "libonnxruntime.so.1");
    const packed = join(tmp, "libonnxruntime.so.1.zst");
    writeFileSync(packed, Bun.zstdCompressSync(readFileSync(lib), { level: 3 }));
    expect(statSync(packed).size).toBeLessThan(statSync(lib).size * 0.5);
    const file: EmbeddedFile = { name: "libonnxruntime.so.1", path: packed, ...fileDigest(lib), compression: "zstd" };
    const dir = join(tmp, "cache", "natives-0123456789abcdef");
    expect(extractFiles([file], dir)).toEqual(["libonnxruntime.so.1"]);
    expect(sameBytes(join(dir, "libonnxruntime.so.1"), lib)).toBe(true);
    expect(extractFiles([file], dir)).toEqual([]); // intact: nothing rewritten
  });

  test("damaged compressed data is refused and leaves nothing behind", () => {
    const src = join(tmp, "data.bin");
    writeFileSync(src, "x".repeat(100_000));
    const packed = join(tmp, "data.bin.zst");
    const bytes = Bun.zstdCompressSync(readFileSync(src));
    bytes[bytes.length - 5]! ^= 0xff;
    writeFileSync(packed, bytes);
    const dir = join(tmp, "cache", "natives-0123456789abcdef");
    expect(() => extractFiles([{ name: "data.bin", path: packed, ...fileDigest(src), compression: "zstd" }], dir)).toThrow(/damaged/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("pruneCache", () => {
  const old = (path: string) => {
    const t = new Date(Date.now() - CACHE_KEEP_RECENT_MS - 60_000);
    utimesSync(path, t, t);
  };

  test("removes other versions' extractions, keeps the current ones, recent ones and anything else", () => {
    const root = join(tmp, "cache");
    const names = [
      "natives-aaaaaaaaaaaaaaaa",
      "model-bbbbbbbbbbbbbbbb",
      "natives-cccccccccccccccc",
      "model-dddddddddddddddd",
      "natives-eeeeeeeeeeeeeeee",
    ];
    for (const n of names) {
      mkdirSync(join(root, n), { recursive: true });
      writeFileSync(join(root, n, "lib.so"), "x");
    }
    mkdirSync(join(root, "notes"));
    writeFileSync(join(root, "model-ffffffffffffffff"), "a file, not an extraction");
    for (const n of ["natives-aaaaaaaaaaaaaaaa", "model-bbbbbbbbbbbbbbbb", "natives-cccccccccccccccc", "model-dddddddddddddddd", "notes"])
      old(join(root, n));
    old(join(root, "model-ffffffffffffffff"));
    // current: aaaa and bbbb; eeee was used a moment ago by another version
    const removed = pruneCache(root, ["natives-aaaaaaaaaaaaaaaa", "model-bbbbbbbbbbbbbbbb"]);
    expect(removed.sort()).toEqual(["model-dddddddddddddddd", "natives-cccccccccccccccc"]);
    expect(readdirSync(root).sort()).toEqual([
      "model-bbbbbbbbbbbbbbbb",
      "model-ffffffffffffffff",
      "natives-aaaaaaaaaaaaaaaa",
      "natives-eeeeeeeeeeeeeeee",
      "notes",
    ]);
  });

  test("a running process keeps marking its extractions, so another version's prune keeps them past the hour", async () => {
    const root = join(tmp, "cache");
    const running = join(root, "natives-1234567890abcdef");
    mkdirSync(running, { recursive: true });
    writeFileSync(join(running, "lib.so"), "x");
    old(running); // started over an hour ago
    const stop = keepMarkedUsed([running], 20);
    try {
      await Bun.sleep(100);
      expect(pruneCache(root, [])).toEqual([]);
      expect(existsSync(join(running, "lib.so"))).toBe(true);
    } finally {
      stop();
    }
    old(running); // the process has stopped: no longer marked, removed after the hour
    expect(pruneCache(root, [])).toEqual(["natives-1234567890abcdef"]);
  });

  test("what an interrupted prune left is removed after the hour, not before", () => {
    const root = join(tmp, "cache");
    const left = join(root, ".prune-natives-1234567890abcdef-42-0a1b2c3d-aaaa");
    mkdirSync(left, { recursive: true });
    expect(pruneCache(root, [])).toEqual([]);
    expect(existsSync(left)).toBe(true);
    old(left);
    pruneCache(root, []);
    expect(existsSync(left)).toBe(false);
  });

  // Two versions on one host (a rolling upgrade, an old `colony backup` beside a new serve): one
  // starts from its extraction, unused for over an hour, while the other prunes. The start marked
  // its directory only after checking its files, so a prune in between deleted it under the start,
  // whose load then found no file.
  test("a start from a long-unused extraction while another version prunes finds its files", async () => {
    const files = describeFiles(SOURCES.slice(0, 1));
    const root = join(tmp, "cache");
    const dir = join(root, "natives-00000000feedbeef");
    const until = Date.now() + 700 + 2500;
    const script = join(tmp, "race.ts");
    writeFileSync(
      script,
      `import { pruneCache, useExtraction } from ${JSON.stringify(join(import.meta.dir, "native.ts"))};
import { readFileSync, utimesSync } from "node:fs";
const [role, files, root, dir, until] = [process.argv[2], JSON.parse(process.argv[3]), process.argv[4], process.argv[5], Number(process.argv[6])];
while (Date.now() < until - 2500) {}
let starts = 0, missing = 0, pruned = 0;
while (Date.now() < until) {
  if (role === "prune") { pruned += pruneCache(root, []).length; continue; }
  try { const t = new Date(Date.now() - 2 * 86400_000); utimesSync(dir, t, t); } catch {} // last used long ago
  useExtraction(files, dir);
  starts++;
  for (const f of files) { try { readFileSync(dir + "/" + f.name); } catch { missing++; } } // what dlopen reads
}
console.log(JSON.stringify({ role, starts, missing, pruned }));`,
    );
    const kids = ["start", "prune"].map((role) =>
      Bun.spawn([process.execPath, script, role, JSON.stringify(files), root, dir, String(until)], { stdout: "pipe", stderr: "pipe" }),
    );
    const results = await Promise.all(
      kids.map(async (k) => ({ code: await k.exited, out: await new Response(k.stdout).text(), err: await new Response(k.stderr).text() })),
    );
    for (const r of results) expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
    const [start, prune] = results.map((r) => JSON.parse(r.out));
    expect(start.starts).toBeGreaterThan(10);
    expect({ missing: start.missing, pruned: prune.pruned }).toEqual({ missing: 0, pruned: prune.pruned });
  }, 15_000);

  test("a missing cache root is nothing to prune", () => {
    expect(pruneCache(join(tmp, "nope"), [])).toEqual([]);
  });
});
