// Distractor trails from real error strings found on this machine: `raise …Error("…")` in the
// Python standard library and site-packages, `throw new …Error("…")` in node_modules. Each gets
// a solution written from its surrounding code (the guarding condition, the enclosing function
// and its docstring). Deterministic: files are read in sorted order, placeholders are filled
// from a seeded PRNG. The harvest is cached in bench/out/error-strings.json.
// The harvest is the machine's at the time of a checkout's first run: packages installed later
// (an apt-get install at 03:43Z on 2026-11-27 added 3,045 strings) are in the corpora of
// checkouts that ran later, and a different corpus gives other distractors and other figures
// (bench/RESULTS.md, Session 11). `corpusIdentity` names the corpus a run measured on;
// BENCH_ERROR_STRINGS=FILE reads a given harvest instead of this checkout's cache, so that
// checkouts can measure on one corpus.
import { existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { createHash } from "node:crypto";
import { basename, dirname, join, relative } from "node:path";
import { fingerprint } from "../../src/core/fingerprint";
import type { Trail } from "../../src/core/trail";
import { OUT_DIR, pick, rng, shuffle } from "./report";

export interface ErrorString {
  lang: "python" | "node";
  /** Error class, e.g. ValueError. */
  cls: string;
  /** The message as written in the source, placeholders still in it. */
  message: string;
  /** Where it was found: module (python) or package (node), and the function. */
  module: string;
  func: string | null;
  condition: string | null;
  doc: string | null;
  file: string;
  line: number;
}

const CACHE = join(OUT_DIR, "error-strings.json");
const CACHE_VERSION = 2;

function pythonRoots(): string[] {
  const roots = ["/usr/lib/python3.11", "/usr/lib/python3/dist-packages"];
  const pyenv = "/root/.pyenv/versions";
  if (existsSync(pyenv)) {
    for (const v of new Bun.Glob("*/lib/python3*").scanSync({ cwd: pyenv, onlyFiles: false })) roots.push(join(pyenv, v));
  }
  return roots.filter((r) => existsSync(r)).sort();
}

function nodeRoots(repoDir: string): string[] {
  return [join(repoDir, "node_modules"), "/usr/lib/node_modules"].filter((r) => existsSync(r));
}

function files(root: string, pattern: string): string[] {
  const out: string[] = [];
  for (const f of new Bun.Glob(pattern).scanSync({ cwd: root, followSymlinks: false })) {
    if (/\.min\.js$|\/dist\/.*\.(?:umd|bundle)|\/__pycache__\//.test(f)) continue;
    out.push(join(root, f));
  }
  return out.sort();
}

// Literal bodies: a run of non-quote, non-backslash characters or escapes; linear.
const PY_RAISE = [
  /\braise\s+(?:[A-Za-z_]\w*\.)?([A-Z]\w*(?:Error|Exception|Warning|Exit))\(\s*(f?)"((?:[^"\\\n]|\\.){6,240})"/,
  /\braise\s+(?:[A-Za-z_]\w*\.)?([A-Z]\w*(?:Error|Exception|Warning|Exit))\(\s*(f?)'((?:[^'\\\n]|\\.){6,240})'/,
];
const JS_THROW = [
  /\bthrow\s+new\s+([A-Z]\w*Error)\(\s*()"((?:[^"\\\n]|\\.){6,240})"/,
  /\bthrow\s+new\s+([A-Z]\w*Error)\(\s*()'((?:[^'\\\n]|\\.){6,240})'/,
  /\bthrow\s+new\s+([A-Z]\w*Error)\(\s*()`((?:[^`\\\n]|\\.){6,240})`/,
];

function pyModule(root: string, file: string): string {
  const rel = relative(root, file)
    .replace(/^site-packages\//, "")
    .replace(/\.py$/, "")
    .replace(/\/__init__$/, "");
  return rel.split("/").join(".");
}

function nodePackage(file: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)(?!.*node_modules\/)/.exec(file);
  return m?.[1] ?? basename(dirname(file));
}

function scanPython(root: string, file: string, out: ErrorString[]): void {
  let text: string;
  try {
    if (statSync(file).size > 2_000_000) return;
    text = readFileSync(file, "utf8");
  } catch {
    return;
  }
  if (!text.includes("raise ")) return;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.includes("raise ")) continue;
    const m = PY_RAISE.map((r) => r.exec(line)).find(Boolean);
    if (!m) continue;
    const indent = line.length - line.trimStart().length;
    let condition: string | null = null;
    for (let j = i - 1; j >= Math.max(0, i - 4); j--) {
      const c = /^\s*(?:if|elif|while)\s+(.{3,160}):\s*$/.exec(lines[j]!) ?? /^\s*(except\s+.{1,120}):\s*$/.exec(lines[j]!);
      if (c) {
        condition = c[1]!;
        break;
      }
    }
    let func: string | null = null;
    let doc: string | null = null;
    for (let j = i - 1; j >= Math.max(0, i - 300); j--) {
      const d = /^(\s*)(?:async\s+)?def\s+(\w+)\s*\(/.exec(lines[j]!);
      if (d && d[1]!.length < indent) {
        func = d[2]!;
        for (let k = j + 1; k < Math.min(lines.length, j + 8); k++) {
          const ds = /^\s*[rRuU]?("""|''')\s*(.*)$/.exec(lines[k]!);
          if (ds) {
            let body = ds[2]!.replace(/("""|''').*$/, "");
            if (!body.trim() && k + 1 < lines.length) body = lines[k + 1]!.trim();
            doc =
              body
                .trim()
                .split(/(?<=\.)\s/)[0]!
                .slice(0, 200) || null;
            break;
          }
        }
        break;
      }
    }
    out.push({
      lang: "python",
      cls: m[1]!,
      message: m[3]!,
      module: pyModule(root, file),
      func,
      condition,
      doc,
      file: relative(root, file),
      line: i + 1,
    });
  }
}

function scanNode(file: string, out: ErrorString[]): void {
  let text: string;
  try {
    if (statSync(file).size > 1_500_000) return;
    text = readFileSync(file, "utf8");
  } catch {
    return;
  }
  if (!text.includes("throw new ")) return;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length > 1000 || !line.includes("throw new ")) continue;
    const m = JS_THROW.map((r) => r.exec(line)).find(Boolean);
    if (!m) continue;
    let condition: string | null = null;
    const sameLine = /\bif\s*\((.{3,160})\)\s*(?:\{\s*)?throw/.exec(line);
    if (sameLine) condition = sameLine[1]!;
    for (let j = i - 1; !condition && j >= Math.max(0, i - 3); j--) {
      const c = /^\s*(?:\}\s*else\s+)?if\s*\((.{3,160})\)\s*\{?\s*$/.exec(lines[j]!);
      if (c) condition = c[1]!;
    }
    let func: string | null = null;
    for (let j = i; j >= Math.max(0, i - 80); j--) {
      const d =
        /\bfunction\s+([A-Za-z_$][\w$]*)\s*\(/.exec(lines[j]!) ??
        /^\s*(?:async\s+|static\s+)*([A-Za-z_$][\w$]*)\s*\([^)]{0,120}\)\s*\{\s*$/.exec(lines[j]!) ??
        /\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:function|\()/.exec(lines[j]!);
      if (d && !/^(?:if|for|while|switch|catch|return)$/.test(d[1]!)) {
        func = d[1]!;
        break;
      }
    }
    const pkg = nodePackage(file);
    out.push({
      lang: "node",
      cls: m[1]!,
      message: m[3]!,
      module: pkg,
      func,
      condition,
      doc: null,
      file: file.slice(file.lastIndexOf("node_modules/") + "node_modules/".length),
      line: i + 1,
    });
  }
}

/** The harvest file runs read: BENCH_ERROR_STRINGS when set, else this checkout's cache. */
export const corpusFile = (): string => process.env.BENCH_ERROR_STRINGS || CACHE;

/**
 * Every distinct error string on this machine (deduplicated on the rendered error line): the
 * harvest file's, when there is one of this version (BENCH_ERROR_STRINGS must be one).
 */
export function harvestErrorStrings(repoDir: string): ErrorString[] {
  const file = corpusFile();
  if (existsSync(file)) {
    const cached = JSON.parse(readFileSync(file, "utf8"));
    if (cached.version === CACHE_VERSION) return cached.strings;
  }
  if (file !== CACHE)
    throw new Error(`BENCH_ERROR_STRINGS=${file} is not a harvest of version ${CACHE_VERSION} (bench/out/error-strings.json is one)`);
  const found: ErrorString[] = [];
  for (const root of pythonRoots()) for (const f of files(root, "**/*.py")) scanPython(root, f, found);
  for (const root of nodeRoots(repoDir)) {
    for (const f of files(root, "**/*.{js,mjs,cjs}")) scanNode(f, found);
  }
  const seen = new Set<string>();
  const strings = found.filter((e) => {
    const key = `${e.cls}: ${e.message}`.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(CACHE, JSON.stringify({ version: CACHE_VERSION, harvested_at: new Date().toISOString(), strings }));
  return strings;
}

/**
 * The corpus a run measures on: how many strings, a content hash (the first 12 hex digits of the
 * sha256 of the strings as JSON), the file, when it was harvested (null for caches written before
 * the date was kept) and when the file was written. Runs on different ids are not comparable.
 */
export function corpusIdentity(repoDir: string): {
  strings: number;
  id: string;
  file: string;
  harvested_at: string | null;
  written_at: string;
} {
  const strings = harvestErrorStrings(repoDir);
  const file = corpusFile();
  const { harvested_at } = JSON.parse(readFileSync(file, "utf8")) as { harvested_at?: string };
  return {
    strings: strings.length,
    id: createHash("sha256").update(JSON.stringify(strings)).digest("hex").slice(0, 12),
    file: relative(repoDir, file).startsWith("..") ? file : relative(repoDir, file),
    harvested_at: harvested_at ?? null,
    written_at: statSync(file).mtime.toISOString(),
  };
}

/** The line benches print about their corpus. */
export const corpusLine = (c: ReturnType<typeof corpusIdentity>) =>
  `distractor corpus: ${c.strings} real error strings, id ${c.id} (${c.file}, ${c.harvested_at ? `harvested ${c.harvested_at}` : `written ${c.written_at}`}); ` +
  "figures compare only between runs on the same id";

// Values placeholders are filled with: the kind of thing error messages interpolate.
const IDENTS = [
  "user_id",
  "config",
  "payload",
  "handler",
  "session",
  "request",
  "options",
  "callback",
  "target",
  "schema",
  "record",
  "buffer",
  "stream",
  "context",
  "token",
  "manifest",
  "worker",
  "resolver",
  "plugin",
  "entry",
];
const PATHS = [
  "/etc/app/config.yaml",
  "/var/lib/app/data.db",
  "./src/index.ts",
  "C:\\Users\\dev\\project\\main.py",
  "/home/ci/build/output.json",
  "../lib/utils.js",
  "/tmp/cache/1f3a/meta.pkl",
  "settings.toml",
  "package.json",
  "requirements.txt",
];
const TYPES = [
  "str",
  "int",
  "NoneType",
  "dict",
  "list",
  "bytes",
  "float",
  "tuple",
  "undefined",
  "object",
  "string",
  "number",
  "Buffer",
  "Promise",
];
const PACKAGES = [
  "requests",
  "numpy",
  "pandas",
  "django",
  "flask",
  "express",
  "react",
  "webpack",
  "lodash",
  "axios",
  "typescript",
  "pytest",
  "sqlalchemy",
  "boto3",
  "vite",
  "eslint",
  "jest",
  "pydantic",
  "fastapi",
  "next",
];

function fillValue(rand: () => number): string {
  const r = rand();
  if (r < 0.3) return pick(IDENTS, rand);
  if (r < 0.45) return `'${pick(IDENTS, rand)}'`;
  if (r < 0.6) return pick(TYPES, rand);
  if (r < 0.75) return String(Math.floor(rand() * (rand() < 0.5 ? 10 : 70000)));
  if (r < 0.88) return pick(PATHS, rand);
  return pick(PACKAGES, rand);
}

/** Fills f-string / format / template placeholders with plausible values. */
export function renderMessage(e: ErrorString, rand: () => number): string {
  let msg = e.message
    .replace(/\$\{[^{}\n]{0,120}\}/g, () => fillValue(rand))
    .replace(/\{[^{}\n]{0,120}\}/g, () => fillValue(rand))
    .replace(/%(?:\([a-z_]{1,30}\))?[-#0 +]?\d{0,3}(?:\.\d{1,3})?[sdrifxg]/g, () => fillValue(rand))
    .replace(/\\n/g, " ")
    .replace(/\\(["'`\\])/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
  if (msg.length > 400) msg = msg.slice(0, 400);
  return msg;
}

export function errorLine(e: ErrorString, rand: () => number): string {
  return `${e.cls}: ${renderMessage(e, rand)}`;
}

const PY_VERSIONS = ["3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"];
const NODE_VERSIONS = ["18.19.0", "20.11.1", "22.3.0"];
const OSES = ["linux", "linux", "linux", "macos", "windows"] as const;

/** A trail for an error string, its solution written from the code around the raise/throw. */
export function distractorTrail(e: ErrorString, rand: () => number, opts: { uniqueCommand?: string } = {}): Trail {
  const where = e.func ? `${e.module}.${e.func}()` : e.module;
  const cond = e.condition ? e.condition.replace(/`/g, "'") : null;
  const rootCause =
    `${where} raises ${e.cls} ` +
    (cond ? `because the guard \`${cond}\` held for the value it was given` : "because the value it was given is not one it accepts") +
    (e.doc ? `. ${where} is documented as: ${e.doc}` : ".");
  const summary = cond
    ? `Pass ${e.func ? `${e.func}()` : "the call"} a value for which \`${cond}\` is false; check the caller in ${e.file}.`
    : `Fix the arguments of ${e.func ? `${e.func}()` : "the failing call"} as ${e.file} expects them.`;
  const steps = [
    `Read ${e.file} at line ${e.line} to see what ${e.func ?? "the code"} checks`,
    cond ? `Make sure \`${cond}\` does not hold for your input` : `Validate the input before calling into ${e.module}`,
    "Re-run the failing command",
  ];
  const isPy = e.lang === "python";
  const version = isPy ? pick(PY_VERSIONS, rand) : pick(NODE_VERSIONS, rand);
  const commands = opts.uniqueCommand ? [opts.uniqueCommand] : undefined;
  return {
    protocol_version: "1.0",
    problem: { error: errorLine(e, rand), error_type: e.cls, root_cause: rootCause },
    solution: {
      summary,
      steps,
      ...(commands ? { commands } : {}),
      verification: `The call completes without raising ${e.cls}.`,
    },
    agent_info: { model: "bench", framework: "bench" },
    environment: { os: pick(OSES, rand), runtime: { name: isPy ? "python" : "node", version } },
  } as Trail;
}

/**
 * At least `n` distinct distractor trails (distinct fingerprints, so none merges into another),
 * with a fixed seed. Error strings are reused with other placeholder values when there are fewer
 * strings than n.
 */
export function distractorTrails(repoDir: string, n: number, seed = 1): Trail[] {
  const rand = rng(seed);
  const strings = shuffle(harvestErrorStrings(repoDir), rand);
  const out: Trail[] = [];
  const fps = new Set<string>();
  for (let round = 0; out.length < n && round < 20; round++) {
    for (const e of strings) {
      if (out.length >= n) break;
      const t = distractorTrail(e, rand);
      const fp = fingerprint(t.problem.error);
      if (fps.has(fp)) continue;
      fps.add(fp);
      out.push(t);
    }
  }
  return out;
}

const PROJECTS = [
  "billing-api",
  "ml-pipeline",
  "webapp",
  "ingest-worker",
  "cli-tools",
  "dashboard",
  "auth-service",
  "etl-jobs",
  "mobile-backend",
  "docs-site",
  "scheduler",
  "search-indexer",
];

/**
 * `n` synthesized trails for the speed benchmarks: the harvested error strings with other
 * placeholder values, projects, packages, versions and environments, each with its own pinned
 * install command (so no two share a merge key and none is merged away).
 */
export function synthesizedTrails(repoDir: string, n: number, seed = 7, from = 0): Trail[] {
  const rand = rng(seed + from);
  const strings = harvestErrorStrings(repoDir);
  const out: Trail[] = [];
  for (let i = from; i < from + n; i++) {
    const e = strings[Math.floor(rand() * strings.length)]!;
    const project = pick(PROJECTS, rand);
    const pkg = e.lang === "python" ? e.module.split(".")[0]! : e.module;
    const cmd =
      e.lang === "python"
        ? `pip install '${pkg.replace(/^site-packages$/, "setuptools")}>=${1 + (i % 9)}.${i % 31}.${Math.floor(i / 31) % 97}'`
        : `npm install ${pkg}@${1 + (i % 9)}.${i % 31}.${Math.floor(i / 31) % 97} --save-exact`;
    const t = distractorTrail(e, rand, { uniqueCommand: cmd });
    t.problem.description = `Seen in ${project} (${pick(PACKAGES, rand)} ${1 + Math.floor(rand() * 5)}.x) while running ${pick(IDENTS, rand)} jobs.`;
    out.push(t);
  }
  return out;
}

/** Search queries in the words an agent would use: the message without its class, plus context. */
export function synthesizedQueries(repoDir: string, n: number, seed = 3): string[] {
  const rand = rng(seed);
  const strings = harvestErrorStrings(repoDir);
  return Array.from({ length: n }, () => {
    const e = strings[Math.floor(rand() * strings.length)]!;
    const msg = renderMessage(e, rand).toLowerCase();
    return e.func ? `${msg} when calling ${e.func}` : `${msg} in ${e.module}`;
  });
}

/**
 * Collisions among the corpus's error strings: pairs that share a key (a fingerprint, a normal
 * form; `keys[i]` is the key of `strings[i]`) while their error class, or their message template
 * (class and message), differs.
 */
export function collisionsAmong(strings: ErrorString[], keys: string[]): { otherClass: number; otherTemplate: number } {
  const byKey = new Map<string, { cls: string; template: string }[]>();
  strings.forEach((e, i) => {
    const entry = { cls: e.cls.toLowerCase(), template: `${e.cls}|${e.message}` };
    const group = byKey.get(keys[i]!);
    if (group) group.push(entry);
    else byKey.set(keys[i]!, [entry]);
  });
  let otherClass = 0;
  let otherTemplate = 0;
  for (const g of byKey.values()) {
    for (let i = 0; i < g.length; i++) {
      for (let j = i + 1; j < g.length; j++) {
        if (g[i]!.cls !== g[j]!.cls) otherClass++;
        if (g[i]!.template !== g[j]!.template) otherTemplate++;
      }
    }
  }
  return { otherClass, otherTemplate };
}
