// The single binary: built by tools/build.ts, it runs from an empty directory with no bun, node or
// node_modules, extracts its native parts to an owner-only cache (removing earlier versions'),
// serves /readyz with all checks ok, and stops cleanly on SIGTERM.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { ensureBinary, freePort, isolatedCopy, pollUntilOk, runBuild, sandboxEnv } from "./support/binary";

const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function expectNothingReachable(dir: string): void {
  // Nothing on the way up from the sandbox can lend the binary a node_modules.
  for (let d = dir; ; d = dirname(d)) {
    expect(existsSync(join(d, "node_modules"))).toBe(false);
    if (d === dirname(d)) break;
  }
}

/** The cache holds the natives and the extracted default model, each owner-only. */
function expectPrivateCache(cacheDir: string): string {
  const subs = readdirSync(cacheDir).sort();
  expect(subs.length).toBe(2);
  const [model, natives] = subs as [string, string];
  expect(model).toMatch(/^model-[0-9a-f]{16}$/);
  expect(natives).toMatch(/^natives-[0-9a-f]{16}$/);
  for (const sub of subs) {
    expect(statSync(join(cacheDir, sub)).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(join(cacheDir, sub))) expect(statSync(join(cacheDir, sub, f)).mode & 0o077).toBe(0);
  }
  const dir = join(cacheDir, natives);
  expect(readdirSync(dir).sort()).toEqual(["libonnxruntime.so.1", "onnxruntime_binding.node", "vec0.so"]);
  expect(readdirSync(join(cacheDir, model)).length).toBeGreaterThan(0);
  return dir;
}

describe("native probe binary (sqlite-vec, onnxruntime, embedded files; no server)", () => {
  test("runs from an empty directory without bun or node, also two at once on a cold cache", async () => {
    const work = mkdtempSync(join(tmpdir(), "colony-probe-"));
    cleanup.push(work);
    const modelDir = join(work, "model", "default");
    mkdirSync(modelDir, { recursive: true });
    writeFileSync(join(modelDir, "manifest.json"), '{"kind":"probe"}');
    writeFileSync(join(modelDir, "model.onnx"), Buffer.alloc(4096, 1));
    const sandbox = join(work, "run");
    mkdirSync(sandbox);
    const exe = join(sandbox, "colony-probe");
    runBuild(["--probe", "--out", exe, "--model-dir", modelDir]);
    expectNothingReachable(sandbox);

    const run = async (cache: string) => {
      const p = Bun.spawn([exe], {
        cwd: sandbox,
        env: sandboxEnv(work, { COLONY_CACHE_DIR: cache }),
        stdout: "pipe",
        stderr: "pipe",
      });
      return { code: await p.exited, stdout: await new Response(p.stdout).text(), stderr: await new Response(p.stderr).text() };
    };
    const check = (pass: string, cache: string, r: { code: number; stdout: string; stderr: string }) => {
      expect({ pass, stderr: r.stderr, code: r.code }).toEqual({ pass, stderr: "", code: 0 });
      const out = JSON.parse(r.stdout);
      expect(out.compiled).toBe(true);
      expect(out.vecVersion).toMatch(/^v\d/);
      expect(out.nearest).toBe(1);
      expect(out.ortOutput).toEqual([1, 2, 3]);
      expect(out.modelFiles.sort()).toEqual(["manifest.json:16", "model.onnx:4096"]);
      expect(out.paths.ortDir).toBe(expectPrivateCache(cache));
    };
    const cache = join(work, "cache");
    check("cold cache", cache, await run(cache));
    check("warm cache", cache, await run(cache));
    const raced = join(work, "raced-cache");
    const both = await Promise.all([run(raced), run(raced)]);
    both.forEach((r, i) => check(`concurrent start ${i}`, raced, r));
  });
});

describe("dist/colony", () => {
  test("serves /readyz with kv, vector and embedding ok from an empty directory, and stops on SIGTERM", async () => {
    const built = ensureBinary();
    // The natives are embedded zstd-compressed: 164.7 MB on 2026-11-28 (161.8 MB on 2026-11-26), 192.8 MB
    // before (README, bench/RESULTS.md).
    expect(statSync(built).size).toBeLessThan(175_000_000);
    const { dir, exe } = isolatedCopy(built);
    cleanup.push(dir);
    expectNothingReachable(dir);
    const env = sandboxEnv(dir);

    const version = Bun.spawnSync([exe, "version"], { cwd: dir, env, stderr: "pipe" });
    expect(version.stderr.toString()).toBe("");
    expect(version.stdout.toString().trim()).toBe(pkg.version);
    expect(version.exitCode).toBe(0);

    const port = await freePort();
    const cache = join(dir, "cache");
    // Extractions left by earlier versions: removed at start (only the current ones remain).
    const longAgo = new Date(Date.now() - 2 * 86400_000); // past CACHE_KEEP_RECENT_MS (a day)
    for (const old of ["natives-0000000000000000", "model-1111111111111111"]) {
      mkdirSync(join(cache, old, "sub"), { recursive: true, mode: 0o700 });
      writeFileSync(join(cache, old, "libonnxruntime.so.1"), "old");
      utimesSync(join(cache, old), longAgo, longAgo);
    }
    const proc = Bun.spawn([exe], {
      cwd: dir,
      env: { ...env, COLONY_DATA_DIR: join(dir, "data"), COLONY_PORT: String(port), COLONY_CACHE_DIR: cache },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const { res } = await pollUntilOk(`http://127.0.0.1:${port}/readyz`, 30_000);
      const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean }> };
      expect(body.status).toBe("ready");
      expect(Object.keys(body.checks).sort()).toEqual(["embedding", "kv", "lexical", "vector"]);
      for (const [name, check] of Object.entries(body.checks)) expect({ name, ok: check.ok }).toEqual({ name, ok: true });
      expectPrivateCache(cache);

      const t0 = performance.now();
      proc.kill("SIGTERM");
      const code = await Promise.race([proc.exited, Bun.sleep(20_000).then(() => "timeout")]);
      expect({ code, stderr: code === 0 ? "" : await new Response(proc.stderr).text() }).toEqual({ code: 0, stderr: "" });
      expect(performance.now() - t0).toBeLessThan(15_000); // a hang, not speed: the drain alone may take 3 s
    } finally {
      proc.kill("SIGKILL");
    }
  });

  test("a COLONY_CACHE_DIR it cannot unpack into: one line naming it, exit 2, for serve and backup alike", () => {
    const { dir, exe } = isolatedCopy(ensureBinary());
    cleanup.push(dir);
    const notADirectory = join(dir, "cache-file");
    writeFileSync(notADirectory, "");
    for (const args of [["serve"], ["backup", join(dir, "b.db")]]) {
      const r = Bun.spawnSync([exe, ...args], {
        cwd: dir,
        env: sandboxEnv(dir, { COLONY_DATA_DIR: join(dir, "data"), COLONY_PORT: "0", COLONY_CACHE_DIR: notADirectory }),
        stdout: "pipe",
        stderr: "pipe",
      });
      const stderr = r.stderr.toString().trim();
      expect({ args, code: r.exitCode, lines: stderr.split("\n").length }).toEqual({ args, code: 2, lines: 1 });
      expect(stderr).toStartWith(`colony: cannot unpack the native libraries into ${notADirectory}/natives-`);
      expect(stderr).toContain("(set COLONY_CACHE_DIR to a writable directory)");
    }
  });
});
