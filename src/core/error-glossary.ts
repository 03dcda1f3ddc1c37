// Document expansion from installed documentation (bench/RESULTS.md, Session 14): the explanation
// of the identifiers an error text contains (errno names and messages, signals, Python and Java
// exceptions, Rust error codes, SQLSTATE codes, PostgreSQL's configuration files, C headers and
// shared libraries by the Debian package that ships them), in the words of their documentation, so that an agent who describes the error in prose ("out of file
// descriptors") can find a trail whose error only says EMFILE. The glossary is data
// (error-glossary.json, written by tools/glossary/build-glossary.ts from Debian documentation
// packages, never by hand), bundled with the code: no I/O. Pure.
import glossary from "./error-glossary.json" with { type: "json" };

type Table = Record<string, string>;
const errno: Table = glossary.errno;
const errnoMessages: Table = glossary.errno_messages;
const signals: Table = glossary.signal;
const python: Table = glossary.python;
const rust: Table = glossary.rust;
const java: Table = glossary.java;
const sqlstate: Table = glossary.sqlstate;
const files: Table = glossary.file;
const packages: Table = glossary.packages;
const headers: Table = glossary.headers;
const libraries: Table = glossary.libraries;
/** Identifiers too common in their documentation to say much about one error (the generator's GENERIC_SHARE). */
const GENERIC = new Set<string>(glossary.generic);

/** The glossary's own version: part of the lexical index version when expansion is on. */
export const ERROR_GLOSSARY_VERSION: number = glossary.version;

/** At most this many identifiers of one text are explained (the first found, in reading order of the kinds below). */
export const MAX_GLOSSARY_ENTRIES = 4;

const ERRNO_NAME = /\bE[A-Z0-9]{2,}\b/g;
const SIGNAL = /\bSIG[A-Z0-9]{2,}\b/g;
const RUST_CODE = /\bE0\d{3}\b/g;
/** An exception or error class, qualified or not: ModuleNotFoundError, java.lang.OutOfMemoryError. */
const EXCEPTION = /\b((?:[a-z_][\w]*\.)*)([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning))\b/g;
/** A SQLSTATE where a driver prints one: `SQLSTATE[28000]`, `SQLSTATE 42501`, MySQL's `ERROR 1698 (28000)`. */
const SQLSTATE = /\bSQLSTATE\W{0,3}([0-9A-Z]{5})\b|\bERROR \d{4,5} \(([0-9A-Z]{5})\)/g;
const FILE_NAMES = Object.keys(files);
/** A header as an #include or a compiler names it: `Python.h`, `openssl/ssl.h` (the last directory and the file). */
const HEADER = /(?<![\w+.-])((?:[\w+-]+\/)?[\w+-][\w+.-]*\.h)\b/g;
/** A shared library as the loader names it (`libssl.so.3`, `libGL.so.1`) or the linker (`-lssl`). */
const LIBRARY = /\b(lib[\w+-]*?)(?:-[\d.]+)?\.so\b|(?<![\w-])-l([\w+-]+)\b/g;
/** The errno messages, longest first, so "too many open files in system" wins over "too many open files". */
const MESSAGES = Object.keys(errnoMessages).sort((a, b) => b.length - a.length);
const MESSAGE_PATTERN = new RegExp(
  `(?<![\\w-])(${MESSAGES.map((m) => m.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|")})(?![\\w-])`,
  "gi",
);

/**
 * The identifiers of a text the glossary explains, each once, with their explanation, in the order
 * found; with `skipGeneric`, not those the glossary marks generic (EINVAL, ENOENT, ValueError).
 */
export function glossaryEntries(text: string, skipGeneric = false): { id: string; text: string }[] {
  const found = new Map<string, string>();
  const add = (id: string, explanation: string | undefined) => {
    if (explanation === undefined || found.has(id) || found.size >= MAX_GLOSSARY_ENTRIES) return;
    if (!(skipGeneric && GENERIC.has(id))) found.set(id, explanation);
  };
  for (const m of text.matchAll(RUST_CODE)) add(m[0], rust[m[0]]);
  for (const m of text.matchAll(ERRNO_NAME)) if (Object.hasOwn(errno, m[0])) add(m[0], errno[m[0]]);
  for (const m of text.matchAll(MESSAGE_PATTERN)) {
    const name = errnoMessages[m[1]!.toLowerCase()];
    if (name !== undefined) add(name, errno[name]);
  }
  for (const m of text.matchAll(SIGNAL)) if (Object.hasOwn(signals, m[0])) add(m[0], signals[m[0]]);
  for (const m of text.matchAll(EXCEPTION)) {
    // A class qualified by a Java package is Java's; otherwise Python's when Python has one of that name.
    const tables = /^javax?\./.test(m[1]!) ? [java, python] : [python, java];
    const table = tables.find((t) => Object.hasOwn(t, m[2]!));
    if (table) add(m[2]!, table[m[2]!]);
  }
  for (const m of text.matchAll(SQLSTATE)) {
    const code = m[1] ?? m[2]!;
    if (Object.hasOwn(sqlstate, code)) add(`SQLSTATE ${code}`, sqlstate[code]);
  }
  for (const f of FILE_NAMES) if (text.includes(f)) add(f, files[f]);
  for (const m of text.matchAll(HEADER)) {
    const pkg = Object.hasOwn(headers, m[1]!) ? headers[m[1]!] : undefined;
    if (pkg !== undefined) add(m[1]!, packages[pkg]);
  }
  for (const m of text.matchAll(LIBRARY)) {
    const name = m[1] ?? `lib${m[2]}`;
    const pkg = Object.hasOwn(libraries, name) ? libraries[name] : undefined;
    if (pkg !== undefined) add(name, packages[pkg]);
  }
  return [...found].map(([id, explanation]) => ({ id, text: explanation }));
}

/** The glossary text of a text's identifiers, one explanation a line ("" when none). */
export const glossaryText = (text: string): string =>
  glossaryEntries(text, expansion.skipGeneric)
    .map((e) => e.text)
    .join("\n");

/**
 * Where expansion is on: the lexical document's body, the embedding input, the text a result's
 * coverage of the query is counted in (service/search.ts). All off as shipped.
 */
export interface GlossaryExpansion {
  lexical: boolean;
  vector: boolean;
  coverage: boolean;
  /** Leave out the identifiers the glossary marks generic. */
  skipGeneric: boolean;
}
export const GLOSSARY_EXPANSION_OPTIONS = ["lexical", "vector", "coverage", "skipGeneric"] as const;
export const GLOSSARY_EXPANSION_OFF: Readonly<GlossaryExpansion> = { lexical: false, vector: false, coverage: false, skipGeneric: false };
let expansion: GlossaryExpansion = { ...GLOSSARY_EXPANSION_OFF };

/**
 * Document expansion: an experiment, off (bench/RESULTS.md, Session 14). Only benches switch it on,
 * in their own process (BENCH_GLOSSARY, a comma-separated list of GLOSSARY_EXPANSION_OPTIONS, bench/lib/colony.ts), before any
 * trail is indexed: lexical documents are counted as tokenized when added and removed, so a colony
 * that indexed them one way rebuilds its lexical index at its next start with the other
 * (core/lexical.ts lexicalIndexVersion).
 */
export function setGlossaryExpansion(on: Partial<GlossaryExpansion>): void {
  expansion = { ...GLOSSARY_EXPANSION_OFF, ...on };
}

export const glossaryExpansion = (): Readonly<GlossaryExpansion> => expansion;
