// The semantic lexicon the retrofit stage (retrofit.ts) pulls word vectors toward: names of
// things (Debian packages, commands, errno codes, npm packages) with the short text that says
// what they are, from sources installed or installable on the build machine. Never the eval or
// dev sets. Each entry relates the content words of its name to the content words of its text.
// Usage: bun tools/model/lexicon.ts OUT.jsonl    (writes the entries and OUT.sources.json)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface LexiconEntry {
  source: "debian" | "man" | "errno" | "npm";
  /** A package, command or errno name. */
  name: string;
  /** What it is, in words: a package's short description (and debtags), a man page's NAME line. */
  text: string;
}

export interface LexiconSource {
  id: LexiconEntry["source"];
  origin: string;
  entries: number;
  sha256: string;
  packages?: Array<{ name: string; version: string | null }>;
  files?: string[];
}

const ROOT = join(import.meta.dir, "../..");
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${r.stderr || r.error}`);
  return r.stdout;
}

function dpkgVersion(pkg: string): string | null {
  const r = spawnSync("dpkg-query", ["-W", "-f", "${Version}", pkg], { encoding: "utf8" });
  return r.status === 0 && r.stdout ? r.stdout : null;
}

/** Debian debtags facets that say what a package is about (not how it is built or packaged). */
const TAG_FACETS = new Set(["devel", "works-with", "works-with-format", "use", "sound", "network", "protocol", "security", "web", "x11"]);

/**
 * Every package Apt knows (`apt-cache dumpavail`, the local package lists: no network): its name,
 * its one-line description, and the values of its topical debtags (`devel::lang:python` →
 * "lang python").
 */
export function debianEntries(dumpavail = run("apt-cache", ["dumpavail"])): LexiconEntry[] {
  const seen = new Set<string>();
  const out: LexiconEntry[] = [];
  for (const stanza of dumpavail.split(/\n\n+/)) {
    const field = (name: string) => {
      const m = stanza.match(new RegExp(`^${name}: (.*(?:\\n .*)*)`, "m"));
      return m ? m[1]!.replace(/\n /g, " ") : "";
    };
    const name = field("Package");
    const description = field("Description");
    if (!name || !description || seen.has(name)) continue;
    seen.add(name);
    const tags = field("Tag")
      .split(",")
      .map((t) => t.trim().split("::"))
      .filter(([facet]) => facet && TAG_FACETS.has(facet))
      .map(([, value]) => (value ?? "").replace(/[:-]/g, " "))
      .filter(Boolean);
    out.push({ source: "debian", name, text: tags.length ? `${description}. ${tags.join(", ")}` : description });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Man page NAME lines (`man -k .`, i.e. whatis): "ls (1) - list directory contents". */
export function manEntries(whatis = run("man", ["-k", "."])): LexiconEntry[] {
  const out = new Map<string, LexiconEntry>();
  for (const line of whatis.split("\n")) {
    const m = line.match(/^(\S+) \(([^)]+)\)\s+- (.+)$/);
    if (!m) continue;
    const key = `${m[1]} ${m[3]}`;
    if (!out.has(key)) out.set(key, { source: "man", name: m[1]!, text: m[3]! });
  }
  return [...out.values()].sort((a, b) => (a.name + a.text < b.name + b.text ? -1 : 1));
}

/** errno names and glibc's messages: EADDRINUSE ↔ "Address already in use". */
export function errnoEntries(): LexiconEntry[] {
  const py = run("python3", [
    "-c",
    "import errno, os\nfor code, name in sorted(errno.errorcode.items()):\n    print(f'{name}\\t{os.strerror(code)}')",
  ]);
  return py
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [name, text] = l.split("\t") as [string, string];
      return { source: "errno" as const, name, text };
    });
}

/** The project's npm dependencies: package name ↔ its package.json description and keywords. */
export function npmEntries(nodeModules = join(ROOT, "node_modules")): LexiconEntry[] {
  const dirs: string[] = [];
  for (const d of readdirSync(nodeModules)) {
    if (d.startsWith(".")) continue;
    if (d.startsWith("@")) for (const s of readdirSync(join(nodeModules, d))) dirs.push(join(nodeModules, d, s));
    else dirs.push(join(nodeModules, d));
  }
  const out: LexiconEntry[] = [];
  for (const dir of dirs.sort()) {
    const p = join(dir, "package.json");
    if (!existsSync(p)) continue;
    try {
      const pkg = JSON.parse(readFileSync(p, "utf8")) as { name?: string; description?: string; keywords?: unknown };
      const keywords = Array.isArray(pkg.keywords) ? pkg.keywords.filter((k) => typeof k === "string") : [];
      const text = [pkg.description ?? "", keywords.join(", ")].filter(Boolean).join(". ");
      if (pkg.name && text) out.push({ source: "npm", name: pkg.name.replace(/^@[^/]+\//, ""), text });
    } catch {
      // A package.json that is not JSON (test fixtures inside packages) says nothing.
    }
  }
  return out;
}

/** Builds every source's entries, with what each came from (for the model's manifest). */
export function buildLexicon(): { entries: LexiconEntry[]; sources: LexiconSource[] } {
  const lists = readdirSync("/var/lib/apt/lists").filter((f) => f.endsWith("_InRelease"));
  const debian = debianEntries();
  const man = manEntries();
  const errno = errnoEntries();
  const npm = npmEntries();
  const digest = (es: LexiconEntry[]) => sha256(es.map((e) => `${e.name}\t${e.text}`).join("\n"));
  const listDates = lists.sort().map((f) => {
    const date = readFileSync(join("/var/lib/apt/lists", f), "utf8").match(/^Date: (.*)$/m)?.[1] ?? "?";
    return `${f} (${date})`;
  });
  const lock = readFileSync(join(ROOT, "package-lock.json"));
  const sources: LexiconSource[] = [
    {
      id: "debian",
      origin: "apt-cache dumpavail: Package, Description (first line), topical debtags (Tag) of every package in the local Apt lists",
      entries: debian.length,
      sha256: digest(debian),
      packages: [{ name: "apt", version: dpkgVersion("apt") }],
      files: listDates,
    },
    {
      id: "man",
      origin: "man -k . (NAME lines of the installed man pages)",
      entries: man.length,
      sha256: digest(man),
      packages: ["man-db", "manpages", "manpages-dev"].map((name) => ({ name, version: dpkgVersion(name) })),
    },
    {
      id: "errno",
      origin: "Python errno.errorcode and os.strerror (glibc messages)",
      entries: errno.length,
      sha256: digest(errno),
      packages: ["python3", "libc6"].map((name) => ({ name, version: dpkgVersion(name) })),
    },
    {
      id: "npm",
      origin: `node_modules package.json description and keywords (package-lock.json sha256 ${sha256(lock.toString("utf8")).slice(0, 16)})`,
      entries: npm.length,
      sha256: digest(npm),
    },
  ];
  return { entries: [...debian, ...man, ...errno, ...npm], sources };
}

if (import.meta.main) {
  const out = process.argv[2];
  if (!out) throw new Error("usage: lexicon.ts OUT.jsonl");
  const { entries, sources } = buildLexicon();
  writeFileSync(out, entries.map((e) => JSON.stringify(e)).join("\n") + "\n");
  writeFileSync(out.replace(/\.jsonl$/, "") + ".sources.json", JSON.stringify(sources, null, 2) + "\n");
  for (const s of sources) console.error(`lexicon ${s.id}: ${s.entries} entries`);
}
