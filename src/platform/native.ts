// Where the native parts (sqlite-vec, onnxruntime) and the default model come from. From source
// they live in node_modules and models/default. In the single binary (tools/build.ts) they are
// embedded; shared libraries cannot be dlopen()ed from the embedded file system, so they are
// copied once into an owner-only cache directory named by a hash of their contents.
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
  chmodSync,
} from "node:fs";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { errorMessage } from "../core/error-message";

export interface NativePaths {
  /** The sqlite-vec loadable extension, for bun:sqlite's db.loadExtension(). */
  sqliteVec: string;
  /** Directory holding onnxruntime_binding.node and libonnxruntime; null from source (stock loading). */
  ortDir: string | null;
  /** Where the default model files can be read (readFileSync) from: embedded or models/default. */
  modelDir: string;
}

/** One embedded native file, as recorded at build time. */
export interface EmbeddedFile {
  name: string;
  /** Path readable with node:fs (inside the binary: /$bunfs/...). */
  path: string;
  /** Size and digest of the extracted file (after decompression). */
  size: number;
  digest: string;
  /** Set when the binary holds the file zstd-compressed (tools/build.ts): smaller binary, same extracted file. */
  compression?: "zstd";
}

/** What the generated entry of the binary registers before the app is imported. */
export interface EmbeddedBundle {
  /** Hash of all native contents; names the cache subdirectory. */
  id: string;
  natives: EmbeddedFile[];
  /** Name (within natives) of the sqlite-vec extension. */
  sqliteVecName: string;
  /** Name (within natives) of the onnxruntime binding; the libraries it needs sit beside it. */
  ortBindingName: string;
  modelDir: string;
  modelFiles: string[];
  /** The model files with their digests (extracted like the natives); names the model's cache dir. */
  models: EmbeddedFile[];
  modelId: string;
}

/** The binary cannot unpack its native parts or default model into the cache directory (COLONY_CACHE_DIR). */
export class CacheDirError extends Error {}

/** The rewritten onnxruntime-node binding loader (tools/build.ts) calls this for its .node path. */
export const ORT_BINDING_HOOK = Symbol.for("colony.native.ortBinding");

const REPO_ROOT = resolve(import.meta.dir, "../..");
const CHUNK = 1 << 20;

let embedded: EmbeddedBundle | null = null;
const prepared = new Map<string, NativePaths>();
let lastPrepared: NativePaths | null = null;

export function isCompiled(): boolean {
  return Bun.isStandaloneExecutable && embedded !== null;
}

/** Called once by the binary's generated entry, before the app (and onnxruntime) is imported. */
export function registerEmbedded(bundle: EmbeddedBundle): void {
  embedded = bundle;
  // Whoever imports onnxruntime first (normally after serve.ts called prepareNatives with the
  // configured cache dir) gets the extracted binding; extraction happens here if not yet done.
  (globalThis as Record<symbol, unknown>)[ORT_BINDING_HOOK] = (): string => {
    const paths = lastPrepared ?? prepareNatives();
    if (paths.ortDir === null) throw new Error("onnxruntime binding requested but not extracted");
    return join(paths.ortDir, bundle.ortBindingName);
  };
}

/** $COLONY_CACHE_DIR, else $XDG_CACHE_HOME/colony, else ~/.cache/colony (same rule as config.ts). */
export function resolveCacheRoot(env: Record<string, string | undefined> = process.env): string {
  const explicit = env.COLONY_CACHE_DIR?.trim();
  if (explicit) return resolve(explicit);
  const xdg = env.XDG_CACHE_HOME?.trim();
  return resolve(join(xdg || join(env.HOME || homedir(), ".cache"), "colony"));
}

function chainHash(h: bigint, chunk: Uint8Array): bigint {
  return Bun.hash.xxHash3(chunk, h);
}

function hex(h: bigint): string {
  return h.toString(16).padStart(16, "0");
}

/**
 * Size and a fast content hash (xxHash3 chained over 1 MiB chunks), read in chunks so that
 * checking a 45 MB library on every start costs milliseconds and no large allocation.
 */
export function fileDigest(path: string): { size: number; digest: string } {
  const fd = openSync(path, "r");
  try {
    const buf = new Uint8Array(CHUNK);
    let size = 0;
    let h = 0n;
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n <= 0) break;
      h = chainHash(h, buf.subarray(0, n));
      size += n;
    }
    return { size, digest: hex(h) };
  } finally {
    closeSync(fd);
  }
}

function isSharedObject(name: string): boolean {
  return /\.(so(\.\d+)*|node|dylib|dll)$/.test(name);
}

/** Creates dir (0700) or checks an existing one is ours, a real directory, and owner-only. */
function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`native cache ${dir} is not a directory`);
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) {
    throw new Error(`native cache ${dir} belongs to another user (uid ${st.uid}); refusing to load code from it`);
  }
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

function isIntact(target: string, file: EmbeddedFile): boolean {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(target);
  } catch {
    return false;
  }
  if (!st.isFile() || st.size !== file.size) return false;
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) return false;
  return fileDigest(target).digest === file.digest;
}

/** Copies the embedded file to target through a temporary name in the same dir: fsync, rename. */
function writeAtomically(file: EmbeddedFile, target: string, mode: number): void {
  // The embedded file system serves whole-file reads only (no file descriptors); this runs once.
  const stored = readFileSync(file.path);
  let data: Uint8Array;
  try {
    data = file.compression === "zstd" ? Bun.zstdDecompressSync(stored) : stored;
  } catch (err) {
    throw new Error(`embedded ${file.name} is damaged (${errorMessage(err)})`);
  }
  let h = 0n;
  for (let off = 0; off < data.length; off += CHUNK) h = chainHash(h, data.subarray(off, off + CHUNK));
  if (data.length !== file.size || hex(h) !== file.digest) {
    throw new Error(`embedded ${file.name} is damaged (${data.length} bytes, ${hex(h)}; expected ${file.size}, ${file.digest})`);
  }
  const tmp = join(target, "..", `.${file.name}.${process.pid}.${crypto.randomUUID()}.tmp`);
  let out = -1;
  try {
    out = openSync(tmp, "wx", mode);
    let off = 0;
    while (off < data.length) off += writeSync(out, data, off, data.length - off);
    fsyncSync(out);
    closeSync(out);
    out = -1;
    chmodSync(tmp, mode); // exactly owner-only, whatever the umask left
    renameSync(tmp, target);
  } catch (err) {
    if (out !== -1) closeSync(out);
    try {
      unlinkSync(tmp);
    } catch {}
    throw err;
  }
}

function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {} // best effort: some file systems refuse fsync on directories
}

/**
 * Makes `dir` hold an intact copy of every file (owner-only), replacing missing, truncated or
 * altered ones. Safe when several processes do it at once: each writes its own temporary file
 * and renames it over the target, so a reader only ever sees a whole file.
 * Returns the names it (re)wrote.
 */
export function extractFiles(files: readonly EmbeddedFile[], dir: string): string[] {
  ensurePrivateDir(dir);
  const written: string[] = [];
  for (const file of files) {
    if (file.name.includes("/") || file.name.startsWith(".")) throw new Error(`bad native name ${file.name}`);
    const target = join(dir, file.name);
    if (isIntact(target, file)) continue;
    writeAtomically(file, target, isSharedObject(file.name) ? 0o700 : 0o600);
    written.push(file.name);
  }
  if (written.length > 0) fsyncDir(dir);
  return written;
}

/** Names the cache subdirectory: sha256 over the files' names and contents (build time only). */
export function contentId(paths: readonly string[]): string {
  const h = new Bun.CryptoHasher("sha256");
  for (const p of paths) {
    h.update(`${basename(p)}\0${statSync(p).size}\0`);
    h.update(readFileSync(p));
  }
  return h.digest("hex").slice(0, 16);
}

/** The cache subdirectory for one set of native contents. */
export function bundleDir(cacheRoot: string, bundleId: string): string {
  return join(cacheRoot, `natives-${bundleId}`);
}

/** What the cache root may hold besides the current version: earlier versions' extractions. */
const CACHE_ENTRY = /^(natives|model)-[0-9a-f]{8,64}$/;
/** An extraction a prune has taken out of use (renamed) and is removing: `.prune-<name>-<pid>-<random>`. */
const PRUNING_ENTRY = /^\.prune-(natives|model)-[0-9a-f]{8,64}-[0-9]+-[0-9a-f-]+$/;
/**
 * An extraction used within this time is kept: a binary of that version is starting from it or
 * running from it (each start marks its directories before it reads them, and a running process
 * marks them again every CACHE_REFRESH_MS). A day rather than an hour (before session 18): a start
 * of a version that has not run for this long, at the very moment another version prunes, is what
 * a prune can still disturb (useExtraction), and that is rarer the longer the time.
 */
export const CACHE_KEEP_RECENT_MS = 24 * 3600_000;
/** How often a running process marks its extractions as used (well inside CACHE_KEEP_RECENT_MS). */
export const CACHE_REFRESH_MS = 10 * 60_000;

/** The cache root's lock (a directory: mkdir is atomic), held while a prune runs and while a start marks its extractions. */
const LOCK_NAME = ".prune.lock";
/** A lock older than this was left by a process that died holding it (holding it takes milliseconds). */
const LOCK_STALE_MS = 60_000;
/** How long a start or a prune waits for the lock before it goes on without it. */
const LOCK_WAIT_MS = 2_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Runs `fn` holding the cache root's lock; `fn(false)` when it could not be had within LOCK_WAIT_MS. */
function withCacheLock<T>(root: string, fn: (locked: boolean) => T): T {
  const lock = join(root, LOCK_NAME);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock, { mode: 0o700 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "EEXIST" || Date.now() >= deadline) return fn(false);
      try {
        if (Date.now() - lstatSync(lock).mtimeMs > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      } catch {}
      Atomics.wait(pause, 0, 0, 5);
      continue;
    }
    try {
      return fn(true);
    } finally {
      try {
        rmdirSync(lock);
      } catch {}
    }
  }
}

const isStale = (path: string, now: number): boolean => {
  const st = lstatSync(path);
  if (!st.isDirectory() || now - st.mtimeMs < CACHE_KEEP_RECENT_MS) return false;
  return !(typeof process.getuid === "function" && st.uid !== process.getuid());
};

/**
 * Removes the extractions of other versions (natives-*, model-*) from the cache root, keeping
 * `keep` and any used within CACHE_KEEP_RECENT_MS: a binary of another version on this host that
 * is running, or starting (it marks its directories before it checks their files), keeps its own.
 * Each is first renamed out of use, then checked again: a start that marked it between the first
 * check and the rename gets it back under its name before it loads anything from it (it would
 * otherwise have loaded from a directory being deleted). A library already loaded stays mapped
 * whatever happens to its file. Best effort: whatever cannot be removed stays, and the leftovers of
 * a prune interrupted midway go at a later start. Returns the names removed.
 */
export function pruneCache(root: string, keep: readonly string[], now = Date.now()): string[] {
  if (!existsSync(root)) return [];
  // Under the lock a start marks its extractions with: no start is between its mark and the prune's check.
  return withCacheLock(root, (locked) => (locked ? pruneLocked(root, keep, now) : []));
}

function pruneLocked(root: string, keep: readonly string[], now: number): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const path = join(root, name);
    try {
      if (PRUNING_ENTRY.test(name)) {
        if (isStale(path, now)) rmSync(path, { recursive: true, force: true });
        continue;
      }
      if (!CACHE_ENTRY.test(name) || keep.includes(name) || !isStale(path, now)) continue;
      const out = join(root, `.prune-${name}-${process.pid}-${crypto.randomUUID()}`);
      renameSync(path, out);
      if (!isStale(out, Date.now())) {
        // Marked meanwhile by a start of its version: back, unless that start already made a new one.
        if (!existsSync(path)) renameSync(out, path);
        continue;
      }
      rmSync(out, { recursive: true, force: true });
      removed.push(name);
    } catch {}
  }
  return removed;
}

/** Marks a cache directory as used now (its mtime), so that other versions' pruning keeps it. */
export function markUsed(dir: string): void {
  try {
    const t = new Date();
    utimesSync(dir, t, t);
  } catch {}
}

/** Marks the directories as used every `everyMs` while the process runs (the timer holds no process open). */
export function keepMarkedUsed(dirs: readonly string[], everyMs = CACHE_REFRESH_MS): () => void {
  const timer = setInterval(() => {
    for (const dir of dirs) markUsed(dir);
  }, everyMs);
  timer.unref?.();
  return () => clearInterval(timer);
}

/**
 * Makes `dir` hold the files for a start to load from: marked as used first (a prune by another
 * version running meanwhile keeps it), then extracted or checked, then marked again.
 */
export function useExtraction(files: readonly EmbeddedFile[], dir: string): string[] {
  for (let attempt = 1; ; attempt++) {
    // Marked under the cache root's lock: a prune either finished before (this start extracts
    // again what it removed) or checks after, and keeps the directory. Without the lock (a root
    // not made yet, a lock held past LOCK_WAIT_MS) the mark goes on unlocked.
    const root = join(dir, "..");
    if (existsSync(root)) withCacheLock(root, () => markUsed(dir));
    else markUsed(dir);
    try {
      const written = extractFiles(files, dir);
      markUsed(dir);
      return written;
    } catch (err) {
      // A prune that judged the directory unused just before this start marked it took it away
      // midway (it gives it back, or it is gone): extract again into what is at the path now.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 3) throw err;
    }
  }
}

/**
 * Paths to the native parts and the default model. From source: node_modules and
 * <repo>/models/default. In the binary: extracts the natives (once per content hash) under
 * opts.cacheDir (default: resolveCacheRoot()) and returns the cache paths. Memoized per cache dir.
 */
export function prepareNatives(opts: { cacheDir?: string } = {}): NativePaths {
  const root = resolve(opts.cacheDir ?? resolveCacheRoot());
  const known = prepared.get(root);
  if (known) return known;
  let paths: NativePaths;
  if (isCompiled() && embedded) {
    const b = embedded;
    const dir = bundleDir(root, b.id);
    const modelDir = join(root, `model-${b.modelId}`);
    try {
      mkdirSync(root, { recursive: true, mode: 0o700 });
      useExtraction(b.natives, dir);
    } catch (err) {
      const why = errorMessage(err);
      throw new CacheDirError(`cannot unpack the native libraries into ${dir} (set COLONY_CACHE_DIR to a writable directory): ${why}`);
    }
    if (b.modelFiles.length > 0 && !existsSync(join(b.modelDir, b.modelFiles[0]!))) {
      throw new Error(`embedded model files are missing from ${b.modelDir}`);
    }
    // A real file for ONNX Runtime to read: mapped from the binary, the model's pages would stay
    // in the process's resident memory for good.
    try {
      useExtraction(b.models, modelDir);
    } catch (err) {
      const why = errorMessage(err);
      throw new CacheDirError(`cannot unpack the default model into ${modelDir} (set COLONY_CACHE_DIR to a writable directory): ${why}`);
    }
    keepMarkedUsed([dir, modelDir]);
    pruneCache(root, [basename(dir), basename(modelDir)]);
    paths = { sqliteVec: join(dir, b.sqliteVecName), ortDir: dir, modelDir };
  } else {
    paths = { sqliteVec: getLoadablePath(), ortDir: null, modelDir: join(REPO_ROOT, "models", "default") };
  }
  prepared.set(root, paths);
  lastPrepared = paths;
  return paths;
}
