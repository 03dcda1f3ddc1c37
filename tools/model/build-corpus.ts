// Builds the static model's training corpus from documentation installed by Debian packages,
// the project's node_modules and Python sources (pre-extracted by extract-python.py).
// Every paragraph goes through the runtime tokenizer (src/embedding/static-tokenizer.ts), so the
// corpus is in exactly the token space the model is queried in.
//
// Usage: bun tools/model/build-corpus.ts WORK_DIR RAW_LINES_FILE...
// Writes WORK_DIR/corpus.txt (deduplicated, shuffled with a fixed seed) and WORK_DIR/corpus-sources.json.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { tokenize } from "../../src/embedding/static-tokenizer.ts";
import { mulberry32 as rng } from "../prng";
import {
  docCommentsToParagraphs,
  htmlToParagraphs,
  jsErrorMessages,
  podToParagraphs,
  roffToParagraphs,
  textToParagraphs,
} from "./text-extract.ts";

type Kind = "html" | "text" | "roff" | "pod" | "dts" | "js" | "lines" | "mo";

interface Source {
  id: string;
  /** Debian packages (or other origins) the files come from. */
  origin: string[];
  files: Array<{ path: string; kind: Kind }>;
  /** Stop reading the source's files once this many tokens were taken (extra packages only). */
  maxTokens?: number;
}

const MIN_TOKENS = 3;
const CHUNK_TOKENS = 300;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

const MAX_CHANGELOG_BYTES = 256 * 1024;

function readText(path: string): string {
  const buf = readFileSync(path);
  const text = (path.endsWith(".gz") ? gunzipSync(buf) : buf).toString("utf8");
  // Changelogs can be megabytes of release notes: their head is the informative part.
  return /\/(changelog|NEWS)[^/]*$/.test(path) ? text.slice(0, MAX_CHANGELOG_BYTES) : text;
}

/** The English source strings (msgids) of a gettext catalog: a program's messages, errors included. */
function moMessageIds(buf: Buffer): string[] {
  if (buf.length < 28) return [];
  const magic = buf.readUInt32LE(0);
  const rd = magic === 0x950412de ? (o: number) => buf.readUInt32LE(o) : (o: number) => buf.readUInt32BE(o);
  if (magic !== 0x950412de && buf.readUInt32BE(0) !== 0x950412de) return [];
  const n = rd(8);
  const origTable = rd(12);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const len = rd(origTable + 8 * i);
    const off = rd(origTable + 8 * i + 4);
    if (len === 0 || off + len > buf.length) continue;
    // Plural forms are NUL-separated; format directives (%s, %d, %lu) are noise.
    for (const msg of buf.toString("utf8", off, off + len).split("\0")) {
      out.push(msg.replace(/%[-+ #0-9.*]{0,8}(?:l{0,2}|z|h{0,2})[a-zA-Z]/g, " "));
    }
  }
  return out;
}

// A package read from an unpacked .deb instead of an installed one (`dpkg-deb -x`), given as
// MODEL_DEB_ROOTS="nodejs-doc=/tmp/nodejs-doc-root ...": on a machine whose Node.js comes from
// NodeSource, installing nodejs-doc would remove nodejs itself.
const debRoots = new Map(
  (process.env.MODEL_DEB_ROOTS ?? "")
    .split(/\s+/)
    .filter((e) => e.includes("="))
    .map((e) => e.split("=", 2) as [string, string]),
);

// Packages added to the recipe for an experiment (MODEL_EXTRA_PACKAGES, space-separated; train.sh
// fills it from tools/model/corpus-extra-packages.txt when MODEL_EXTRA=1): their man pages,
// catalogs and changelogs join the corpus, and each "-doc" package is read as documentation.
const extraPackages = (process.env.MODEL_EXTRA_PACKAGES ?? "").split(/\s+/).filter(Boolean);
// An extra documentation package gives at most this many tokens, so one large manual cannot
// crowd out the rest (files are read in sorted order until the cap).
const EXTRA_DOC_MAX_TOKENS = Number(process.env.MODEL_EXTRA_DOC_MAX_TOKENS ?? 1_500_000);

function dpkgFiles(pkg: string): string[] {
  const root = debRoots.get(pkg);
  if (root) return walk(root, () => true).map((p) => p.slice(root.replace(/\/$/, "").length));
  const listFile = [`/var/lib/dpkg/info/${pkg}.list`, `/var/lib/dpkg/info/${pkg}:amd64.list`].find(existsSync);
  if (!listFile) return [];
  return readFileSync(listFile, "utf8")
    .split("\n")
    .filter((p) => p.length > 0 && existsSync(p) && statSync(p).isFile())
    .sort();
}

// Man pages, catalogs and changelogs are read only from the packages listed here, so packages
// installed later on the machine for other reasons do not change the corpus.
const PACKAGES_FILE = join(import.meta.dir, "corpus-packages.txt");
const corpusPackages: Set<string> | null = existsSync(PACKAGES_FILE)
  ? new Set(
      readFileSync(PACKAGES_FILE, "utf8")
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith("#"))
        .concat(extraPackages),
    )
  : null;

/** Installed files matching `accept`, each mapped to the Debian package that owns it. */
function fileOwners(accept: (p: string) => boolean): Map<string, string> {
  const owners = new Map<string, string>();
  for (const f of readdirSync("/var/lib/dpkg/info").sort()) {
    if (!f.endsWith(".list")) continue;
    const pkg = f.slice(0, -5).replace(/:amd64$/, "");
    if (corpusPackages && !corpusPackages.has(pkg)) continue;
    for (const line of readFileSync(join("/var/lib/dpkg/info", f), "utf8").split("\n")) {
      if (accept(line)) owners.set(line, pkg);
    }
  }
  return owners;
}

function walk(dir: string, accept: (p: string) => boolean, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) walk(p, accept, out);
    else if (st.isFile() && accept(p)) out.push(p);
  }
  return out;
}

// Rust's rendered docs: the books, the error index and std; not core/alloc (duplicates of std),
// sources or the unstable book (mostly feature-gate stubs).
const RUST_KEEP = [
  "/book/",
  "/reference/",
  "/error-index.html",
  "/rust-by-example/",
  "/nomicon/",
  "/edition-guide/",
  "/rustc/",
  "/embedded-book/",
  "/std/",
];

function docSources(): Source[] {
  const pkgSource = (pkg: string, pick: (p: string) => Kind | null): Source => ({
    id: pkg,
    origin: [pkg],
    files: dpkgFiles(pkg).flatMap((path) => {
      const kind = pick(path);
      // The picker sees the installed path; an unpacked .deb is read where it was unpacked.
      const root = debRoots.get(pkg)?.replace(/\/$/, "") ?? "";
      return kind ? [{ path: root + path, kind }] : [];
    }),
  });
  const byExt = (p: string): Kind | null => {
    if (/\.html?$/.test(p)) return "html";
    if (/\.(md|txt|rst)(\.gz)?$/.test(p)) return "text";
    if (/\.info(-\d+)?(\.gz)?$/.test(p)) return "text";
    return null;
  };
  const sources: Source[] = [
    pkgSource("python3.11-doc", (p) => (p.includes("/_sources/") && p.endsWith(".txt") ? "text" : null)),
    pkgSource("nodejs-doc", (p) => (p.endsWith(".md.gz") || p.endsWith(".md") ? "text" : null)),
    pkgSource("rust-doc", (p) => (p.endsWith(".html") && RUST_KEEP.some((k) => p.includes(k)) ? "html" : null)),
    pkgSource("postgresql-doc-15", (p) => (p.endsWith(".html") ? "html" : null)),
    pkgSource("git-doc", (p) => (p.endsWith(".txt") ? "text" : null)),
    pkgSource("docker-doc", (p) => (/\.md(\.gz)?$/.test(p) ? "text" : null)),
    pkgSource("cmake-doc", (p) => (p.includes("/_sources/") && p.endsWith(".txt") ? "text" : null)),
    pkgSource("sqlite3-doc", (p) => (p.endsWith(".html") ? "html" : null)),
    pkgSource("golang-1.19-doc", byExt),
    pkgSource("debian-reference-en", (p) => (p.endsWith(".html") ? "html" : null)),
    pkgSource("bash-doc", byExt),
    pkgSource("binutils-doc", byExt),
    pkgSource("autoconf-doc", byExt),
    pkgSource("libtool-doc", byExt),
    pkgSource("perl-doc", (p) => (p.endsWith(".pod") ? "pod" : null)),
  ];
  for (const pkg of extraPackages.filter((p) => p.endsWith("-doc") || p.endsWith("-docs"))) {
    const files = dpkgFiles(pkg);
    // Sphinx manuals ship their sources: read those rather than the rendered pages.
    const sphinx = files.some((p) => p.includes("/_sources/"));
    const src = pkgSource(pkg, (p) => {
      if (/\/(genindex|search|py-modindex)[^/]*\.html$|\/_static\/|\/javadoc\/|\/api\//.test(p)) return null;
      if (sphinx) return p.includes("/_sources/") && /\.(txt|rst)$/.test(p) ? "text" : null;
      return byExt(p);
    });
    sources.push({ ...src, maxTokens: EXTRA_DOC_MAX_TOKENS });
  }
  // English man pages of every installed package (manpages, manpages-dev, glibc-doc, libssl-doc,
  // perl-doc, git, gcc, ...), mapped back to their packages through dpkg's file lists.
  const manOwners = fileOwners((p) => /^\/usr\/share\/man\/man[1-8][^/]*\/[^/]+\.gz$/.test(p));
  const manFiles = [...manOwners.keys()].filter((p) => existsSync(p) && statSync(p).isFile()).sort();
  sources.push({
    id: "man-pages",
    origin: [...new Set(manFiles.map((p) => manOwners.get(p)!))].sort(),
    files: manFiles.map((path) => ({ path, kind: "roff" as const })),
  });
  // gettext catalogs: one per message domain (the "de" copy when there is one; only msgids are
  // read), which gives the English messages of libc, coreutils, apt, dpkg, git, make, ld, ...
  const moOwners = fileOwners((p) => p.startsWith("/usr/share/locale/") && p.endsWith(".mo"));
  const moByDomain = new Map<string, string>();
  for (const loc of readdirSync("/usr/share/locale").sort()) {
    const dir = join("/usr/share/locale", loc, "LC_MESSAGES");
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).sort()) {
      if (!f.endsWith(".mo") || f.startsWith("iso_") || !moOwners.has(join(dir, f))) continue;
      if (!moByDomain.has(f) || loc === "de") moByDomain.set(f, join(dir, f));
    }
  }
  const moFiles = [...moByDomain.values()].sort();
  sources.push({
    id: "gettext-catalogs",
    origin: [...new Set(moFiles.map((p) => moOwners.get(p) ?? "unknown"))].sort(),
    files: moFiles.map((path) => ({ path, kind: "mo" as const })),
  });
  // Upstream changelogs and NEWS of installed packages (head of each): bug-fix wording.
  const clOwners = fileOwners((p) => /^\/usr\/share\/doc\/[^/]+\/(changelog|NEWS)(\.gz)?$/.test(p));
  const clFiles = [...clOwners.keys()].filter((p) => existsSync(p) && statSync(p).isFile()).sort();
  sources.push({
    id: "changelogs",
    origin: [...new Set(clFiles.map((p) => clOwners.get(p)!))].sort(),
    files: clFiles.map((path) => ({ path, kind: "text" as const })),
  });
  // The project's own npm dependencies: READMEs, .d.ts doc comments, error messages in JS.
  const nm = join(import.meta.dir, "../../node_modules");
  const jsFiles = walk(nm, (p) => /\.(md|d\.ts|js|cjs|mjs)$/.test(p) && !p.includes("/.bin/")).map((path) => ({
    path,
    kind: (path.endsWith(".md") ? "text" : path.endsWith(".d.ts") ? "dts" : "js") as Kind,
  }));
  sources.push({ id: "node_modules", origin: ["package-lock.json"], files: jsFiles });
  return sources;
}

function paragraphsOf(path: string, kind: Kind): string[] {
  if (kind !== "lines" && statSync(path).size > MAX_FILE_BYTES) return [];
  if (kind === "mo") return moMessageIds(readFileSync(path));
  const text = readText(path);
  switch (kind) {
    case "html":
      return htmlToParagraphs(text);
    case "text":
      return textToParagraphs(text);
    case "roff":
      return text.includes("\n.so ") || text.startsWith(".so ") ? [] : roffToParagraphs(text);
    case "pod":
      return podToParagraphs(text);
    case "dts":
      return docCommentsToParagraphs(text);
    case "js":
      return jsErrorMessages(text);
    case "lines":
      return text.split("\n");
  }
}

// mulberry32: a tiny seeded PRNG so the shuffle is the same on every machine.

function main(): void {
  const [workDir, ...rawFiles] = process.argv.slice(2);
  if (!workDir) throw new Error("usage: build-corpus.ts WORK_DIR RAW_LINES_FILE...");
  const sources = docSources();
  for (const f of rawFiles) {
    const [id, path] = f.includes("=") ? (f.split("=", 2) as [string, string]) : [basename(f), f];
    sources.push({ id, origin: [id], files: [{ path, kind: "lines" }] });
  }
  const seen = new Set<string>();
  const lines: string[] = [];
  const stats: Array<{ id: string; origin: string[]; files: number; lines: number; tokens: number }> = [];
  for (const src of sources) {
    const t0 = performance.now();
    let nLines = 0;
    let nTokens = 0;
    let nFiles = 0;
    for (const { path, kind } of src.files) {
      if (src.maxTokens !== undefined && nTokens >= src.maxTokens) break;
      nFiles++;
      for (const para of paragraphsOf(path, kind)) {
        const toks = tokenize(para, 100_000);
        if (toks.length < MIN_TOKENS) continue;
        for (let s = 0; s < toks.length; s += CHUNK_TOKENS) {
          const chunk = toks.slice(s, s + CHUNK_TOKENS);
          if (chunk.length < MIN_TOKENS) continue;
          const line = chunk.map((t) => t.text).join(" ");
          const key = createHash("sha1").update(line).digest("base64");
          if (seen.has(key)) continue;
          seen.add(key);
          lines.push(line);
          nLines++;
          nTokens += chunk.length;
        }
      }
    }
    stats.push({ id: src.id, origin: src.origin, files: nFiles, lines: nLines, tokens: nTokens });
    console.error(
      `${src.id}: ${nFiles} of ${src.files.length} files, ${nLines} lines, ${nTokens} tokens (${((performance.now() - t0) / 1000).toFixed(1)}s)`,
    );
  }
  const rand = rng(20261121);
  for (let i = lines.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = lines[i]!;
    lines[i] = lines[j]!;
    lines[j] = t;
  }
  const corpus = lines.join("\n") + "\n";
  writeFileSync(join(workDir, "corpus.txt"), corpus);
  const sha256 = createHash("sha256").update(corpus).digest("hex");
  const tokens = stats.reduce((a, s) => a + s.tokens, 0);
  const lock = readFileSync(join(import.meta.dir, "../../package-lock.json"));
  const packageLockSha256 = createHash("sha256").update(lock).digest("hex");
  writeFileSync(
    join(workDir, "corpus-sources.json"),
    JSON.stringify({ lines: lines.length, tokens, sha256, package_lock_sha256: packageLockSha256, sources: stats }, null, 1),
  );
  console.error(`corpus: ${lines.length} lines, ${tokens} tokens, sha256 ${sha256}`);
}

main();
