// `make build`: compiles Colony into one executable, dist/colony, that runs without Bun, Node or
// node_modules. The native parts (sqlite-vec, onnxruntime's binding and library) and the default
// model (models/default) are embedded, the natives zstd-compressed when that pays;
// src/platform/native.ts extracts them to a content-hashed cache at first start and removes the
// extractions of other versions. A generated entry (in a work directory beside the output,
// removed afterwards) registers the embedded files before it imports the app, so nothing native
// is loaded before it is in place.
//
//   bun tools/build.ts [--out dist/colony] [--entry src/main.ts] [--model-dir models/default] [--probe]
//   --probe builds dist/colony-probe from tools/native-probe.ts (native check without the server).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { contentId, fileDigest, type EmbeddedBundle } from "../src/platform/native.ts";
import { errorMessage } from "../src/core/error-message.ts";

const ROOT = resolve(import.meta.dir, "..");
const NM = join(ROOT, "node_modules");

interface Options {
  out: string;
  entry: string;
  modelDir: string;
}

function parseArgs(argv: string[]): Options {
  let out: string | null = null;
  let entry = join(ROOT, "src/main.ts");
  let modelDir = join(ROOT, "models/default");
  let probe = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--probe") probe = true;
    else if (a === "--out" && argv[i + 1]) out = resolve(argv[++i]!);
    else if (a === "--entry" && argv[i + 1]) entry = resolve(argv[++i]!);
    else if (a === "--model-dir" && argv[i + 1]) modelDir = resolve(argv[++i]!);
    else throw new Error(`unknown argument ${a}; usage: bun tools/build.ts [--out FILE] [--entry FILE] [--model-dir DIR] [--probe]`);
  }
  if (probe) entry = join(ROOT, "tools/native-probe.ts");
  return { out: out ?? join(ROOT, probe ? "dist/colony-probe" : "dist/colony"), entry, modelDir };
}

/** The native files for the platform we build on (the binary targets that platform). */
function nativeSources(): { files: string[]; sqliteVec: string; ortBinding: string } {
  const os = process.platform === "win32" ? "windows" : process.platform;
  const ext = process.platform === "darwin" ? "dylib" : process.platform === "win32" ? "dll" : "so";
  const sqliteVec = join(NM, `sqlite-vec-${os}-${process.arch}`, `vec0.${ext}`);
  const ortDir = join(NM, "onnxruntime-node/bin/napi-v6", process.platform, process.arch);
  const ortBinding = join(ortDir, "onnxruntime_binding.node");
  for (const p of [sqliteVec, ortBinding]) {
    if (!existsSync(p)) throw new Error(`missing native part ${relative(ROOT, p)}: run make deps`);
  }
  // The binding finds libonnxruntime through RUNPATH $ORIGIN, so everything beside it goes too.
  const ortFiles = readdirSync(ortDir)
    .map((f) => join(ortDir, f))
    .filter((p) => statSync(p).isFile());
  return { files: [sqliteVec, ...ortFiles], sqliteVec, ortBinding };
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

/**
 * onnxruntime-node's dist/binding.js requires its .node file by a path relative to the package,
 * which does not exist inside the binary. This swaps that one require for a dlopen of the
 * extracted copy, whose path src/platform/native.ts provides through a global hook
 * (ORT_BINDING_HOOK).
 */
const ortBindingPlugin: BunPlugin = {
  name: "colony-ort-binding",
  setup(build) {
    build.onLoad({ filter: /onnxruntime-node[\\/]dist[\\/]binding\.js$/ }, async (args) => {
      const src = await Bun.file(args.path).text();
      const pattern = /require\(`\.\.\/bin\/napi-v6\/\$\{process\.platform\}\/\$\{process\.arch\}\/onnxruntime_binding\.node`\)/g;
      const matches = src.match(pattern)?.length ?? 0;
      if (matches !== 1) {
        throw new Error(`onnxruntime-node binding.js changed (${matches} loader matches): update tools/build.ts`);
      }
      const loader = `(() => {
  const hook = globalThis[Symbol.for("colony.native.ortBinding")];
  if (typeof hook !== "function") throw new Error("colony: onnxruntime loaded before the native parts were registered");
  const mod = { exports: {} };
  process.dlopen(mod, hook());
  return mod.exports;
})()`;
      return { contents: src.replace(pattern, loader), loader: "js" };
    });
  },
};

/** zstd level for embedded natives: libonnxruntime 45.8 → 15.2 MB in about 3 s (level 19: 13.5 MB in 2 min). */
const ZSTD_LEVEL = 9;

/**
 * The file to embed for a native part: a zstd-compressed copy in the build directory when that
 * saves at least a tenth (src/platform/native.ts decompresses it once, on extraction), else the
 * file itself.
 */
function packNative(path: string, buildDir: string): { path: string; compression?: "zstd" } {
  const bytes = readFileSync(path);
  const packed = Bun.zstdCompressSync(bytes, { level: ZSTD_LEVEL });
  if (packed.length > bytes.length * 0.9) return { path };
  const out = join(buildDir, `${basename(path)}.zst`);
  writeFileSync(out, packed);
  return { path: out, compression: "zstd" };
}

function generateEntry(buildDir: string, opts: Options, natives: ReturnType<typeof nativeSources>, models: string[]) {
  const imports: string[] = [];
  const records: string[] = [];
  natives.files.forEach((p, i) => {
    const { size, digest } = fileDigest(p);
    const packed = packNative(p, buildDir);
    imports.push(`import n${i} from ${JSON.stringify(packed.path)} with { type: "file" };`);
    const compression = packed.compression ? `, compression: "${packed.compression}"` : "";
    records.push(`{ name: ${JSON.stringify(p.split("/").pop())}, path: n${i}, size: ${size}, digest: "${digest}"${compression} }`);
  });
  const modelPaths = models.map((m) => join(opts.modelDir, m));
  const bundle: Omit<EmbeddedBundle, "natives" | "modelDir" | "models"> = {
    id: contentId(natives.files),
    sqliteVecName: natives.sqliteVec.split("/").pop()!,
    ortBindingName: natives.ortBinding.split("/").pop()!,
    modelFiles: models,
    modelId: models.length > 0 ? contentId(modelPaths) : "none",
  };
  // compile.assets puts a directory under the executable's root (import.meta.dir) by its last name.
  const modelDirName = opts.modelDir.split("/").pop()!;
  // The model is extracted like the natives (with the digests recorded here), so that ONNX Runtime
  // reads it from a real file instead of the process keeping the binary's pages of it resident.
  const modelRecords = models.map((m, i) => {
    const { size, digest } = fileDigest(modelPaths[i]!);
    return `{ name: ${JSON.stringify(m)}, path: join(import.meta.dir, ${JSON.stringify(modelDirName)}, ${JSON.stringify(m)}), size: ${size}, digest: "${digest}" }`;
  });
  const source = `// Generated by tools/build.ts: do not edit.
import { join } from "node:path";
import { registerEmbedded } from ${JSON.stringify(join(ROOT, "src/platform/native.ts"))};
${imports.join("\n")}

registerEmbedded({
  ...${JSON.stringify(bundle)},
  modelDir: join(import.meta.dir, ${JSON.stringify(modelDirName)}),
  models: [
    ${modelRecords.join(",\n    ")},
  ],
  natives: [
    ${records.join(",\n    ")},
  ],
});
// Imported only now, so that the natives are registered before onnxruntime-node can load. The app
// is not the main module here (import.meta.main is false in it), so its main(argv) is called.
const app: { main?: (argv: string[]) => Promise<void> } = await import(${JSON.stringify(opts.entry)});
if (typeof app.main === "function") await app.main(process.argv.slice(2));
`;
  const entry = join(buildDir, "entry.ts");
  writeFileSync(entry, source);
  return { entry, id: bundle.id };
}

export async function build(argv: string[] = []): Promise<{ out: string; bytes: number; ms: number }> {
  const t0 = performance.now();
  const opts = parseArgs(argv);
  if (!existsSync(opts.entry)) throw new Error(`entry ${relative(ROOT, opts.entry)} does not exist`);
  // A private work directory beside the output: concurrent builds do not share a generated entry,
  // and the finished binary is renamed into place (same file system), so a binary that is running
  // or being tested is never torn. The binary keeps its final name: Bun shows it in stack traces.
  const buildDir = join(dirname(opts.out), `.build-${basename(opts.out)}-${process.pid}`);
  rmSync(buildDir, { recursive: true, force: true });
  mkdirSync(dirname(opts.out), { recursive: true });
  mkdirSync(buildDir, { mode: 0o700 });
  try {
    return await compile(opts, buildDir, t0);
  } finally {
    rmSync(buildDir, { recursive: true, force: true });
  }
}

async function compile(opts: Options, buildDir: string, t0: number): Promise<{ out: string; bytes: number; ms: number }> {
  const natives = nativeSources();
  const modelDir = opts.modelDir;
  const models = listFiles(modelDir);
  if (models.length === 0) {
    console.warn(`warning: ${relative(ROOT, modelDir)} is empty: the binary will have no default model`);
  }
  const { entry, id } = generateEntry(buildDir, opts, natives, models);
  const tmpOut = join(buildDir, basename(opts.out));
  const result = await Bun.build({
    entrypoints: [entry],
    throw: false,
    target: "bun",
    format: "esm",
    // Precompiled bytecode: `colony version` 41 → 24 ms, idle RSS 141 → 127 MB, for 4 MB more
    // binary and about 4 s more build time (measured with bench/startup.bench.ts).
    bytecode: true,
    minify: { syntax: true, whitespace: true, identifiers: false },
    sourcemap: "linked",
    naming: { asset: "[name].[ext]" },
    plugins: [ortBindingPlugin],
    compile: {
      outfile: tmpOut,
      assets: models.length > 0 ? [modelDir] : [],
      // The binary takes its settings from the environment only, never from files in the cwd.
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
    },
  });
  if (!result.success) {
    for (const log of result.logs) {
      const pos = log.position ? ` (${relative(ROOT, log.position.file)}:${log.position.line})` : "";
      console.error(`${log.level}: ${log.message}${pos}`);
    }
    throw new Error("bun build failed");
  }
  renameSync(tmpOut, opts.out);
  const bytes = statSync(opts.out).size;
  const ms = Math.round(performance.now() - t0);
  console.log(
    `built ${relative(process.cwd(), opts.out)}: ${(bytes / 1e6).toFixed(1)} MB in ${ms} ms ` +
      `(natives ${id}, ${natives.files.length} native files, ${models.length} model files)`,
  );
  return { out: opts.out, bytes, ms };
}

if (import.meta.main) {
  try {
    await build(process.argv.slice(2));
  } catch (err) {
    console.error(`build failed: ${errorMessage(err)}`);
    process.exit(1);
  }
}
