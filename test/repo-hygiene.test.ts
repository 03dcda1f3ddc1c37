// What a fresh clone meets in its first minutes: the default data directory stays out of git, and
// `npm ci` installs without warnings (every install script is decided in package.json's
// allowScripts, and no .npmrc holds keys npm does not know) and without fetching CUDA add-ons.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR } from "./support/paths";

const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall"];

/** Every installed package (scoped ones included) that has an install-time script. */
function packagesWithInstallScripts(): string[] {
  const root = join(REPO_DIR, "node_modules");
  const names = readdirSync(root).flatMap((n) =>
    n.startsWith("@") ? readdirSync(join(root, n)).map((m) => `${n}/${m}`) : n.startsWith(".") ? [] : [n],
  );
  return names.filter((name) => {
    const file = join(root, name, "package.json");
    if (!existsSync(file)) return false;
    const scripts = (JSON.parse(readFileSync(file, "utf8")) as { scripts?: Record<string, string> }).scripts ?? {};
    return INSTALL_SCRIPTS.some((s) => s in scripts);
  });
}

describe("fresh clone", () => {
  test("colony_data/ (the default COLONY_DATA_DIR) is ignored by git", () => {
    const r = Bun.spawnSync(["git", "check-ignore", "-q", "colony_data/colony.db"], { cwd: REPO_DIR });
    expect(r.exitCode).toBe(0);
  });

  test("every dependency's install script is allowed or denied in package.json, onnxruntime-node's denied", () => {
    const allow = (JSON.parse(readFileSync(join(REPO_DIR, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean> })
      .allowScripts;
    expect(allow).toBeDefined();
    const decided = new Set(Object.keys(allow!).map((k) => k.replace(/(.)@.*$/, "$1")));
    const undecided = packagesWithInstallScripts().filter((name) => !decided.has(name));
    expect(undecided).toEqual([]);
    // Its postinstall fetches CUDA libraries from outside the npm registry; the CPU build ships in the package.
    expect(allow!["onnxruntime-node"]).toBe(false);
    expect(allow!.bun).toBe(true);
  });

  test("no .npmrc (npm warns about every key it does not know)", () => {
    expect(existsSync(join(REPO_DIR, ".npmrc"))).toBe(false);
  });
});
