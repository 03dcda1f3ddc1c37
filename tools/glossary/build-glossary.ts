// Builds src/core/error-glossary.json: what recognizable error identifiers mean, in the words of
// the documentation installed on this machine (Debian packages), for document expansion
// (src/core/error-glossary.ts). Sources, each read as shipped, never edited by hand:
// - errno names: errno(3)'s list of error names (manpages-dev), and the explanation most section-2
//   man pages give the name in their ERRORS sections (the modal wording, so no one page decides);
//   errno messages (strerror text from errno(3), "Too many open files") point to their name;
// - signals: signal(7)'s table (manpages);
// - Python built-in exceptions: the first paragraph of each in library/exceptions (python3.11-doc);
// - Rust compiler error codes: the first paragraph of each in the error index (rust-doc);
// - Java exceptions and errors: the first sentence of each class's description (openjdk-17-doc);
// - SQLSTATE codes: their condition names in PostgreSQL's errcodes appendix (postgresql-doc-15),
//   and PostgreSQL's configuration files: the first paragraph of the chapter each has;
// - C headers and shared libraries (Python.h, openssl/ssl.h, libstdc++.so.6, -lssl): the
//   description of the installed Debian package that ships the file (dpkg's database), for the
//   files exactly one package ships.
// Never reads the dev set or shared/eval. Run: node_modules/.bin/bun tools/glossary/build-glossary.ts
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { htmlToParagraphs, roffToParagraphs } from "../model/text-extract";

const OUT = process.env.GLOSSARY_OUT ?? join(resolve(import.meta.dir, "../.."), "src/core/error-glossary.json");
/** The longest explanation kept for one identifier, in words: the head of a paragraph says what it is. */
const MAX_WORDS = 50;

const clip = (text: string, words = MAX_WORDS) => {
  const w = text.replace(/\s+/g, " ").trim().split(" ");
  return w.length <= words ? w.join(" ") : w.slice(0, words).join(" ");
};
const firstSentence = (text: string) => {
  const m = /^(.*?[.!?])(\s|$)/.exec(text.replace(/\s+/g, " ").trim());
  return m ? m[1]! : text;
};
const packageVersion = (pkg: string) => execFileSync("dpkg-query", ["-W", "-f=${Version}", pkg], { encoding: "utf8" }).trim();
const readMan = (path: string) => gunzipSync(readFileSync(path)).toString("utf8");

/** The roff source of a man page's section (from `.SH NAME` to the next `.SH`). */
function manSection(src: string, name: string): string | null {
  const lines = src.split("\n");
  const start = lines.findIndex((l) => new RegExp(`^\\.SH\\s+"?${name}"?\\s*$`).test(l));
  if (start < 0) return null;
  let end = lines.findIndex((l, i) => i > start && l.startsWith(".SH"));
  if (end < 0) end = lines.length;
  return lines.slice(start + 1, end).join("\n");
}

/**
 * An identifier is generic when more than this share of its documentation's population names it:
 * the section-2 pages with an ERRORS section for errno names (EINVAL, ENOENT), the `raise`
 * statements of Python's standard library for exceptions (ValueError, TypeError). Its explanation
 * says little about one error in particular (an idf, from the documentation instead of the trails).
 */
const GENERIC_SHARE = 0.1;

/** How many section-2 pages must give a name's explanation in one wording for it to be kept. */
const MODAL_MIN = 5;

// ---- errno ------------------------------------------------------------------------------------
const ERRNO_NAME = /^(E[A-Z0-9]{2,})\s+(.*)$/;

function errnoGlossary() {
  const errno = manSection(readMan("/usr/share/man/man3/errno.3.gz"), "DESCRIPTION") ?? "";
  const list = errno.slice(errno.indexOf("List of error names"));
  const described = new Map<string, string>();
  const messages = new Map<string, string>();
  for (const p of roffToParagraphs(list)) {
    const m = ERRNO_NAME.exec(p);
    if (!m) continue;
    const [, name, rest] = m;
    if (described.has(name!)) continue;
    // "Too many open files (POSIX.1-2001). Commonly caused by ..."; "Synonym for EAGAIN" has no message.
    const text = rest!.replace(/\s*\((POSIX|C99|C11|Linux|BSD)[^)]*\)/g, "").trim();
    described.set(name!, text);
    const message = /^([A-Z][^.;(]*?)(?:\s*\(|\.|;|$)/.exec(rest!)?.[1]?.trim();
    if (message && message.split(" ").length >= 2 && !/^(Synonym|On Linux|Same as)/.test(message)) {
      messages.set(message.toLowerCase(), name!);
    }
  }
  // The explanations section-2 pages give each name, counted by wording: the commonest wins.
  const explanations = new Map<string, Map<string, number>>();
  const listedBy = new Map<string, number>();
  let pagesWithErrors = 0;
  const dir = "/usr/share/man/man2";
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".gz"))) {
    const src = readMan(join(dir, f));
    if (src.startsWith(".so ")) continue;
    const errors = manSection(src, "ERRORS");
    if (!errors) continue;
    pagesWithErrors++;
    for (const n of new Set(errors.match(/\bE[A-Z0-9]{2,}\b/g) ?? [])) listedBy.set(n, (listedBy.get(n) ?? 0) + 1);
    for (const p of roffToParagraphs(errors)) {
      const m = ERRNO_NAME.exec(p);
      if (!m || !described.has(m[1]!)) continue;
      const text = firstSentence(m[2]!.trim());
      if (text.split(" ").length < 3) continue;
      const counts = explanations.get(m[1]!) ?? new Map<string, number>();
      counts.set(text, (counts.get(text) ?? 0) + 1);
      explanations.set(m[1]!, counts);
    }
  }
  const names: Record<string, string> = {};
  for (const [name, text] of [...described].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const counts = [...(explanations.get(name) ?? new Map<string, number>())].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    // The commonest wording, when it is common (MODAL_MIN pages) and general (not a "(call only)" case).
    const [modal, pages] = counts[0] ?? ["", 0];
    names[name] = clip([text, pages >= MODAL_MIN && !modal.startsWith("(") ? modal : ""].filter(Boolean).join(" "));
  }
  const byMessage: Record<string, string> = {};
  for (const [message, name] of [...messages].sort(([a], [b]) => (a < b ? -1 : 1))) byMessage[message] = name;
  const generic = [...listedBy].filter(([n, k]) => n in names && k > GENERIC_SHARE * pagesWithErrors).map(([n]) => n);
  return { names, messages: byMessage, generic };
}

// ---- signals ----------------------------------------------------------------------------------
function signalGlossary(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readMan("/usr/share/man/man7/signal.7.gz").split("\n")) {
    // SIGSEGV\tP1990\tCore\tInvalid memory reference
    const m = /^(SIG[A-Z0-9]+)\t[^\t]*\t[^\t]*\t(.+)$/.exec(line);
    if (m && !out[m[1]!]) out[m[1]!] = clip(m[2]!.replace(/\\[(&|-]./g, "").replace(/\\/g, ""));
  }
  return out;
}

// ---- HTML helpers ----------------------------------------------------------------------------
/** The paragraphs of an HTML fragment, as plain text. */
const paragraphs = (html: string) => htmlToParagraphs(html).map((p) => p.replace(/\s+/g, " ").trim());

// ---- Python -----------------------------------------------------------------------------------
const PYTHON_LIB = "/usr/lib/python3.11";

function pythonGlossary(): Record<string, string> {
  const html = readFileSync("/usr/share/doc/python3.11-doc/html/library/exceptions.html", "utf8");
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<dt class="sig sig-object py" id="([A-Za-z]+)">[\s\S]*?<dd>([\s\S]*?)<\/p>/g)) {
    const name = m[1]!;
    if (!/(Error|Exception|Exit|Interrupt|Warning|Iteration|Group)$/.test(name) || out[name]) continue;
    const text = paragraphs(`${m[2]}</p>`)[0];
    if (text) out[name] = clip(text);
  }
  return out;
}

/** Python exceptions raised by more than GENERIC_SHARE of the standard library's `raise` statements. */
function genericPythonExceptions(): string[] {
  const counts = new Map<string, number>();
  let total = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory() && e.name !== "site-packages" && e.name !== "dist-packages" && e.name !== "test") walk(path);
      else if (e.name.endsWith(".py")) {
        for (const m of readFileSync(path, "utf8").matchAll(/\braise ([A-Z]\w*)\b/g)) {
          counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
          total++;
        }
      }
    }
  };
  walk(PYTHON_LIB);
  return [...counts].filter(([, k]) => k > GENERIC_SHARE * total).map(([n]) => n);
}

// ---- Rust -------------------------------------------------------------------------------------
function rustGlossary(): Record<string, string> {
  const html = readFileSync("/usr/share/doc/rust-doc/html/error-index.html", "utf8");
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<h2 id="(E\d{4})"[^>]*>[\s\S]*?<\/h2>([\s\S]*?)(?=<h2 |$)/g)) {
    // The first paragraph (a "no longer emitted" note is a heading, not a paragraph).
    const p = /<p>([\s\S]*?)<\/p>/.exec(m[2]!)?.[0];
    const text = p ? paragraphs(p)[0] : undefined;
    if (text) out[m[1]!] = clip(text);
  }
  return out;
}

// ---- Java -------------------------------------------------------------------------------------
const JAVA_API = "/usr/share/doc/openjdk-17-jre-headless/api";

function javaGlossary(): Record<string, string> {
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (/^[A-Z]\w*(Exception|Error)\.html$/.test(e.name)) {
        const name = e.name.slice(0, -".html".length);
        const html = readFileSync(path, "utf8");
        const section = /<section class="class-description"[\s\S]*?<div class="block">([\s\S]*?)<\/div>/.exec(html)?.[1];
        const text = section ? paragraphs(`<p>${section}</p>`)[0] : undefined;
        if (!text) continue;
        // Two classes of one simple name (java.lang.annotation.AnnotationTypeMismatchException and
        // another) are kept by neither: the glossary cannot tell which the error means.
        if (seen.has(name)) delete out[name];
        else out[name] = clip(firstSentence(text));
        seen.add(name);
      }
    }
  };
  walk(JAVA_API);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

// ---- PostgreSQL -------------------------------------------------------------------------------
const PG_HTML = "/usr/share/doc/postgresql-doc-15/html";

function sqlstateGlossary(): Record<string, string> {
  const html = readFileSync(join(PG_HTML, "errcodes-appendix.html"), "utf8");
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<code class="literal">([0-9A-Z]{5})<\/code><\/td><td><code class="symbol">([a-z_]+)<\/code>/g)) {
    out[m[1]!] = m[2]!.replace(/_/g, " ");
  }
  return out;
}

/** PostgreSQL's configuration files, by the page of the manual that describes each. */
const PG_FILES: Record<string, string> = {
  "pg_hba.conf": "auth-pg-hba-conf.html",
  "pg_ident.conf": "auth-username-maps.html",
};

function pgFileGlossary(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, page] of Object.entries(PG_FILES)) {
    const html = readFileSync(join(PG_HTML, page), "utf8");
    const body = html.slice(html.indexOf("</h2>"));
    const first = paragraphs(/<p>([\s\S]*?)<\/p>/.exec(body)?.[0] ?? "")[0];
    if (first) out[file] = clip(first);
  }
  return out;
}

// ---- Headers and libraries: the package that ships them --------------------------------------
const MULTIARCH_LIB = "/usr/lib/x86_64-linux-gnu";

/** Every installed package's description: the synopsis and the first paragraph of the long text. */
function packageDescriptions(): Map<string, string> {
  const out = new Map<string, string>();
  const raw = execFileSync("dpkg-query", ["-W", "-f=${binary:Package}\x1f${Description}\x1e"], { encoding: "utf8", maxBuffer: 1 << 28 });
  for (const record of raw.split("\x1e")) {
    const [pkg, description] = record.split("\x1f");
    if (!pkg || !description) continue;
    const [synopsis, ...long] = description.split("\n");
    const para: string[] = [];
    for (const line of long) {
      if (line.trim() === ".") break;
      para.push(line.trim());
    }
    out.set(pkg.trim().replace(/:amd64$/, ""), clip(`${synopsis!.trim()}. ${para.join(" ")}`));
  }
  return out;
}

/** Which package ships each file, from dpkg's database (files no package ships are left out). */
function owners(paths: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < paths.length; i += 500) {
    let raw = "";
    try {
      raw = execFileSync("dpkg", ["-S", ...paths.slice(i, i + 500)], {
        encoding: "utf8",
        maxBuffer: 1 << 28,
        stdio: ["ignore", "pipe", "ignore"],
      });
    } catch (e) {
      raw = String((e as { stdout?: string }).stdout ?? ""); // dpkg -S exits 1 when some path has no package
    }
    for (const line of raw.split("\n")) {
      const m = /^([^:]+(?::[a-z0-9]+)?): (.+)$/.exec(line);
      if (m && !m[1]!.includes(",")) out.set(m[2]!, m[1]!.replace(/:amd64$/, ""));
    }
  }
  return out;
}

const listFiles = (dir: string, depth: number, keep: (name: string) => boolean): string[] => {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory() && depth > 1) out.push(...listFiles(path, depth - 1, keep));
    else if (!e.isDirectory() && keep(e.name)) out.push(path);
  }
  return out;
};

/**
 * Header names (`Python.h`, `openssl/ssl.h`, as an #include writes them, one or two levels under
 * /usr/include) and library names (`libssl`, as `libssl.so.3` and `-lssl` name it) to the package
 * that ships them; a name two packages ship is left out.
 */
function fileGlossary(): { packages: Record<string, string>; headers: Record<string, string>; libraries: Record<string, string> } {
  const headerFiles = listFiles("/usr/include", 3, (n) => n.endsWith(".h"));
  const libraryFiles = listFiles(MULTIARCH_LIB, 1, (n) => /^lib[\w+-]+\.so(\.\d+)*$/.test(n));
  // Debian 12 merges /lib into /usr/lib, but dpkg records many libraries under /lib (zlib1g's libz.so.1).
  const recorded = owners([...headerFiles, ...libraryFiles, ...libraryFiles.map((p) => p.replace(/^\/usr/, ""))]);
  const owner = new Map(
    [...headerFiles, ...libraryFiles].flatMap((p) => {
      const pkg = recorded.get(p) ?? recorded.get(p.replace(/^\/usr/, ""));
      return pkg ? [[p, pkg] as [string, string]] : [];
    }),
  );
  const byName = (entries: [string, string | undefined][]) => {
    const seen = new Map<string, string | null>();
    for (const [name, pkg] of entries) {
      if (!pkg) continue;
      const before = seen.get(name);
      seen.set(name, before === undefined || before === pkg ? pkg : null);
    }
    return Object.fromEntries([...seen].filter((e): e is [string, string] => e[1] !== null).sort(([a], [b]) => (a < b ? -1 : 1)));
  };
  const headerEntries: [string, string | undefined][] = [];
  for (const path of headerFiles) {
    const parts = path.slice("/usr/include/".length).split("/");
    const pkg = owner.get(path);
    // As #include names it: the file, or its directory and the file (openssl/ssl.h); the
    // multiarch and versioned Python directories are search paths, not part of the name.
    const dirs = parts.slice(0, -1).filter((d) => !/^(x86_64-linux-gnu|python3\.\d+)$/.test(d));
    const file = parts.at(-1)!;
    if (dirs.length === 0) headerEntries.push([file, pkg]);
    if (dirs.length === 1) headerEntries.push([`${dirs[0]}/${file}`, pkg]);
  }
  // A library's runtime package (libssl3 ships libssl.so.3) says what it is; its -dev package ships
  // only the unversioned link (libssl.so), read when no runtime file is installed.
  const libraryName = (path: string) =>
    path
      .slice(MULTIARCH_LIB.length + 1)
      .replace(/\.so(\.\d+)*$/, "")
      .replace(/-[\d.]+$/, "");
  const versioned = libraryFiles.filter((p) => /\.so\.\d/.test(p));
  const runtimeNames = new Set(versioned.filter((p) => owner.has(p)).map(libraryName));
  const libraryEntries: [string, string | undefined][] = [
    ...versioned.map((p): [string, string | undefined] => [libraryName(p), owner.get(p)]),
    ...libraryFiles
      .filter((p) => !/\.so\.\d/.test(p) && !runtimeNames.has(libraryName(p)))
      .map((p): [string, string | undefined] => [libraryName(p), owner.get(p)]),
  ];
  const headers = byName(headerEntries);
  const libraries = byName(libraryEntries);
  const descriptions = packageDescriptions();
  const used = new Set([...Object.values(headers), ...Object.values(libraries)]);
  const packages = Object.fromEntries([...used].sort().flatMap((p) => (descriptions.has(p) ? [[p, descriptions.get(p)!]] : [])));
  const described = (t: Record<string, string>) => Object.fromEntries(Object.entries(t).filter(([, p]) => p in packages));
  return { packages, headers: described(headers), libraries: described(libraries) };
}

// ---- Output -----------------------------------------------------------------------------------
const sources = [
  { kind: "errno", package: "manpages-dev", files: "man3/errno.3, man2/*.2 ERRORS" },
  { kind: "signal", package: "manpages", files: "man7/signal.7" },
  { kind: "python", package: "python3.11-doc", files: "html/library/exceptions.html" },
  { kind: "python generic", package: "libpython3.11-stdlib", files: "/usr/lib/python3.11/**/*.py raise statements" },
  { kind: "rust", package: "rust-doc", files: "html/error-index.html" },
  { kind: "java", package: "openjdk-17-doc", files: "api/**/*Exception.html, *Error.html" },
  { kind: "sqlstate", package: "postgresql-doc-15", files: "html/errcodes-appendix.html" },
  { kind: "file", package: "postgresql-doc-15", files: Object.values(PG_FILES).join(", ") },
  {
    kind: "header, library",
    package: "dpkg",
    files: "/usr/include/**/*.h, /usr/lib/x86_64-linux-gnu/lib*.so*: dpkg -S, package descriptions",
  },
].map((s) => ({ ...s, version: packageVersion(s.package) }));
for (const path of [JAVA_API, PG_HTML]) if (!existsSync(path)) throw new Error(`${path} is missing: install the packages of 'sources'`);

const errno = errnoGlossary();
const glossary = {
  about: "What error identifiers mean, from installed documentation: tools/glossary/build-glossary.ts writes it; never edit by hand.",
  version: 1,
  sources,
  errno: errno.names,
  errno_messages: errno.messages,
  generic: [...errno.generic, ...genericPythonExceptions()].sort(),
  signal: signalGlossary(),
  python: pythonGlossary(),
  rust: rustGlossary(),
  java: javaGlossary(),
  sqlstate: sqlstateGlossary(),
  file: pgFileGlossary(),
  ...fileGlossary(),
};
writeFileSync(OUT, `${JSON.stringify(glossary, null, 1)}\n`);
const sizes = Object.entries(glossary)
  .filter(([, v]) => v && typeof v === "object" && !Array.isArray(v))
  .map(([k, v]) => `${k} ${Object.keys(v as object).length}`);
console.log(`wrote ${OUT}: ${sizes.join(", ")}`);
