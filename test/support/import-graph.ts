// The import graph of src/ and the layering rules it must follow (docs/architecture.md, "Layers").
// Imports are read with a regular expression, which is enough for this code base: every import is
// an `import … from "x"`, `export … from "x"`, `import "x"` or `import("x")` with a literal.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export type Layer = "core" | "base" | "ports" | "adapter" | "service" | "http" | "mcp" | "entry";

/** Which layer a file (path relative to src/, with forward slashes) belongs to. */
export function layerOf(file: string): Layer {
  if (file.startsWith("core/")) return "core";
  if (["config.ts", "log.ts", "progress.ts", "version.ts"].includes(file) || file.startsWith("platform/")) return "base";
  // The port types adapters implement, and the in-memory index adapters share.
  if (["store/ports.ts", "store/seams.ts", "store/copy-ports.ts", "store/hamming-index.ts", "embedding/embedder.ts"].includes(file))
    return "ports";
  if (file.startsWith("store/") || file.startsWith("embedding/")) return "adapter";
  if (file.startsWith("service/")) return "service";
  if (file.startsWith("http/")) return "http";
  if (file.startsWith("mcp/")) return "mcp";
  // compose.ts picks the adapters; serve.ts and main.ts start the process; cli/ are the commands
  // main runs; ops/ are commands on an adapter's own files (backup and restore of the SQLite database).
  if (["compose.ts", "serve.ts", "main.ts"].includes(file) || file.startsWith("cli/") || file.startsWith("ops/")) return "entry";
  throw new Error(`${file} is in no layer: add it to test/support/import-graph.ts and docs/architecture.md`);
}

/** What each layer may import (besides itself). Entry points may import anything. */
export const ALLOWED: Record<Layer, readonly Layer[]> = {
  core: [],
  base: ["core"],
  ports: ["core"],
  adapter: ["core", "base", "ports"],
  service: ["core", "base", "ports"],
  http: ["core", "base", "ports", "service"],
  mcp: ["core", "base", "ports", "service", "http"],
  entry: ["core", "base", "ports", "adapter", "service", "http", "mcp"],
};

/** Packages that are a storage or model engine: only adapters and entry points may load them. */
export const DRIVER = /^(bun:sqlite|pg|postgres|onnxruntime-[a-z-]+)$/;

export interface Edge {
  from: string;
  to: string;
}

/** Files under src/ that are code, not tests. */
export function sourceFiles(srcDir: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts")) out.push(path);
    }
  };
  walk(srcDir);
  return out.map((p) => relative(srcDir, p).split("\\").join("/")).sort();
}

const SPECIFIERS = [/\bfrom\s+["']([^"']+)["']/g, /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g, /^\s*import\s+["']([^"']+)["']/gm];

/** The module specifiers a source text imports (comments left out). */
export function specifiersOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const found = new Set<string>();
  for (const pattern of SPECIFIERS) for (const m of code.matchAll(pattern)) found.add(m[1]!);
  return [...found];
}

/** The src-relative file a relative specifier points at, or null when it leaves src or is no .ts file. */
export function resolveSpecifier(srcDir: string, from: string, spec: string): string | null {
  const base = resolve(srcDir, dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    if (candidate.endsWith(".ts") && existsSync(candidate) && statSync(candidate).isFile()) {
      const rel = relative(srcDir, candidate).split("\\").join("/");
      return rel.startsWith("..") ? null : rel;
    }
  }
  return null;
}

export interface Graph {
  files: string[];
  edges: Edge[];
  /** Imports of packages (non-relative specifiers), per file. */
  packages: Edge[];
}

export function readGraph(srcDir: string): Graph {
  const files = sourceFiles(srcDir);
  const edges: Edge[] = [];
  const packages: Edge[] = [];
  for (const from of files) {
    for (const spec of specifiersOf(readFileSync(join(srcDir, from), "utf8"))) {
      if (!spec.startsWith(".")) {
        packages.push({ from, to: spec });
        continue;
      }
      const to = resolveSpecifier(srcDir, from, spec);
      if (to) edges.push({ from, to });
    }
  }
  return { files, edges, packages };
}

/** Every import that goes against the layering, as "from -> to (why)". */
export function layerViolations(graph: Pick<Graph, "edges" | "packages">): string[] {
  const out: string[] = [];
  for (const { from, to } of graph.edges) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a === b || ALLOWED[a].includes(b)) {
      // One storage engine never reaches into another.
      const engine = (f: string) => /^store\/(sqlite|postgres)\//.exec(f)?.[1];
      if (a === "adapter" && engine(from) && engine(to) && engine(from) !== engine(to)) {
        out.push(`${from} -> ${to} (one storage adapter imports another)`);
      }
      continue;
    }
    out.push(`${from} -> ${to} (${a} may not import ${b})`);
  }
  for (const { from, to } of graph.packages) {
    const a = layerOf(from);
    if (DRIVER.test(to) && a !== "adapter" && a !== "entry") out.push(`${from} -> ${to} (only adapters load a driver)`);
  }
  return out;
}

/** The import cycles (strongly connected components of more than one file, or a file importing itself). */
export function importCycles(graph: Pick<Graph, "files" | "edges">): string[][] {
  const next = new Map<string, string[]>(graph.files.map((f) => [f, []]));
  for (const { from, to } of graph.edges) next.get(from)?.push(to);
  // Tarjan's algorithm, iterative enough for a few hundred files.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const f of graph.files) if (!index.has(f)) visit(f);
  return cycles;
}
