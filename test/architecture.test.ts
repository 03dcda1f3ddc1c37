// The import graph of src/ follows the layers of docs/architecture.md: no cycle, no upward arrow,
// and only the entry points (compose.ts, serve.ts, main.ts, ops/) wire adapters.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { importCycles, layerOf, layerViolations, readGraph, specifiersOf } from "./support/import-graph";
import { REPO_DIR } from "./support/paths";

const graph = readGraph(join(REPO_DIR, "src"));

describe("import graph of src/", () => {
  test("every source file belongs to a layer and the graph was read", () => {
    expect(graph.files.length).toBeGreaterThan(50);
    expect(graph.edges.length).toBeGreaterThan(100);
    for (const f of graph.files) expect(() => layerOf(f)).not.toThrow();
  });

  test("no import goes against the layers", () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  test("no import cycle", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  test("nothing under src/service, src/http or src/mcp imports a storage or embedding adapter", () => {
    const wired = graph.edges.filter((e) => ["service", "http", "mcp"].includes(layerOf(e.from)) && layerOf(e.to) === "adapter");
    expect(wired).toEqual([]);
  });
});

describe("the checker itself", () => {
  test("reads every form of import, and none in comments", () => {
    const text = [
      'import { a } from "./a";',
      'import type {\n  B,\n  C,\n} from "../b";',
      'export { d } from "./d";',
      'import "./side-effect";',
      'const e = await import("./e");',
      '// an example: import { x } from "./not-this";',
      '/* import { y } from "./nor-this"; */',
    ].join("\n");
    expect(specifiersOf(text).sort()).toEqual(["../b", "./a", "./d", "./e", "./side-effect"]);
  });

  test("finds an upward arrow, an adapter in the service, a driver outside adapters and a cycle", () => {
    const edges = [
      { from: "http/app.ts", to: "mcp/hosted.ts" },
      { from: "service/subsystems.ts", to: "store/sqlite/store.ts" },
      { from: "core/a.ts", to: "service/colony.ts" },
      { from: "store/postgres/store.ts", to: "store/sqlite/database.ts" },
      { from: "service/trails.ts", to: "store/ports.ts" },
    ];
    const packages = [
      { from: "service/subsystems.ts", to: "bun:sqlite" },
      { from: "store/sqlite/database.ts", to: "bun:sqlite" },
    ];
    expect(layerViolations({ edges, packages })).toEqual([
      "http/app.ts -> mcp/hosted.ts (http may not import mcp)",
      "service/subsystems.ts -> store/sqlite/store.ts (service may not import adapter)",
      "core/a.ts -> service/colony.ts (core may not import service)",
      "store/postgres/store.ts -> store/sqlite/database.ts (one storage adapter imports another)",
      "service/subsystems.ts -> bun:sqlite (only adapters load a driver)",
    ]);
    const files = ["mcp/config.ts", "mcp/tools.ts", "core/x.ts"];
    const cyclic = [
      { from: "mcp/config.ts", to: "mcp/tools.ts" },
      { from: "mcp/tools.ts", to: "mcp/config.ts" },
      { from: "core/x.ts", to: "core/x.ts" },
    ];
    expect(importCycles({ files, edges: cyclic })).toEqual([["mcp/config.ts", "mcp/tools.ts"], ["core/x.ts"]]);
  });
});
