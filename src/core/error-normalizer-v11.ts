// Normalizer version 11, frozen: stored fingerprints computed with it must stay reproducible (aliases
// of stored trails, decisions §2). Do not change its output; the current version is
// error-normalizer.ts. Pure: no I/O. Secrets are redacted by the caller (fingerprint.ts) first.
//
// Version 11 = version 10 (error-normalizer-v10.ts, frozen; it builds on versions 9 to 1), with the
// rules below written from the misses of a sixth external set of real reports
// (test/fixtures/fingerprint-real-variants-6.json), gathered in session 17 after version 10 and
// measured first (bench/RESULTS.md "Session 17"): a compiler's missing header and the dynamic
// loader's missing library are read as the report whatever build lines, prompts or program names
// surround them, and Node's hint line and a newer wording of its experimental warning go before
// version 10 reads the report. error-normalizer-v11.test.ts checks each rule with real reports;
// docs/fingerprint.md lists every rule.
//
// Every regex starts with a lookbehind, a word boundary, an anchor or a literal, and has no nested
// ambiguous quantifiers, so the pass stays linear on adversarial input.
import { applyGated, type GatedRule } from "./error-normalizer-v5.ts";
import { normalizeErrorTextV10 } from "./error-normalizer-v10.ts";

/**
 * The blanks between two words of a compiler's or the loader's message: a console may wrap the line
 * there or a reporter widen them (versions 2 to 10 read any run of blanks as one, so the rules below
 * must too: a rule stricter than the form it replaces splits reports that form joined).
 */
const GAP = String.raw`\s{1,8}`;
const spaced = (phrase: string, gap: string = GAP) => phrase.split(" ").join(gap);

/**
 * glibc's words for ENOENT in the locales the external sets' reports were printed in (French, German,
 * Spanish, Simplified Chinese): GCC writes the system's message in the user's language after the
 * header's name.
 */
const NO_SUCH_FILE = [
  spaced("No such file or directory"),
  spaced("Aucun fichier ou dossier de ce type"),
  spaced("Datei oder Verzeichnis nicht gefunden"),
  spaced("No existe el fichero o el directorio"),
  "没有那个文件或目录",
];

/**
 * A compiler that cannot find a header: GCC's "fatal error: X: No such file or directory" (in the
 * user's locale), Clang's "fatal error: 'X' file not found", MSVC's "fatal error C1083: Cannot open
 * include file: 'X': No such file or directory". The header is the error; what surrounds it is the
 * build's: the source file and line, the include chain, the echoed #include and its caret, make's
 * "compilation terminated." and "*** [target] Error 1", setuptools' "error: command 'gcc' failed
 * with exit status 1" (which named no header: versions 5 to 10 read that line as the report, so
 * every header a pip build missed had one fingerprint), prompts and CI prefixes. Case and blanks as
 * versions 2 to 10 read them ("Fatal error:  'X' file not found", a wrap after "fatal error:").
 */
const MISSING_HEADER = new RegExp(
  String.raw`fatal${GAP}error(?:${GAP}C1083:${GAP}${spaced("Cannot open include file:")}${GAP}'([^'\s]{1,300})':${GAP}${NO_SUCH_FILE[0]}|:${GAP}'([^'\s]{1,300})'${GAP}${spaced("file not found")}|:${GAP}([^'"\s:<>]{1,300}):${GAP}(?:${NO_SUCH_FILE.join("|")}))`,
  "gi",
);

/**
 * A configure step's probe, whose missing header is expected and not the report's error: autoconf's
 * conftest.c (every config.log holds "conftest.c:11:10: fatal error: ac_nonexistent.h: No such file
 * or directory", the preprocessor check, and one per header looked for), numpy.distutils'
 * _configtest.c, PyYAML's check_libyaml.c (it then builds without libyaml), CMake's try-compile
 * sources in CMakeFiles/CMakeTmp or CMakeScratch. Read on the compiler's line before "fatal error".
 */
const PROBE_SOURCE = /(?:^|[\s/\\])(?:conftest|_configtest|check_libyaml)\.(?:c|cc|cpp|cxx|m|mm)\b|[/\\]CMake(?:Tmp|Scratch)[/\\]/i;

/** The first header a compiler missed outside a configure probe, if the report holds one. */
function missingHeader(errorText: string): string | undefined {
  for (const m of errorText.matchAll(MISSING_HEADER)) {
    const before = errorText.slice(Math.max(0, m.index - 300), m.index);
    if (PROBE_SOURCE.test(before.slice(before.lastIndexOf("\n") + 1))) continue;
    return m[1] ?? m[2] ?? m[3];
  }
  return undefined;
}

/**
 * The dynamic loader: "./app: error while loading shared libraries: libX.so.1: cannot open shared
 * object file: No such file or directory". The program before it is the user's (a path, a name, an
 * AppImage's or a snap's), and a terminal may wrap the line anywhere: it is read with its line breaks
 * removed, a break that stood for a blank being a gap of none.
 */
const LOADER_GAP = String.raw`\s{0,8}`;
const MISSING_LIBRARY = new RegExp(
  String.raw`${spaced("error while loading shared libraries:", LOADER_GAP)}${LOADER_GAP}([^\s:]{1,300}):${LOADER_GAP}${spaced("cannot open shared object file: No such file or directory", LOADER_GAP)}`,
  "i",
);

/**
 * Surroundings removed before version 10 reads the report; each differs between two machines or two
 * releases hitting the same error and names nothing of the error itself.
 */
const V11_LINE_RULES: GatedRule[] = [
  // Node's hint after a warning: "(Use `node --trace-warnings ...` to show where the warning was
  // created)", "--trace-deprecation" after a deprecation; printed once per process, so a report
  // has it after its first warning or not at all (on its own line, or joined to the warning's), with
  // a Markdown quote's ">" before it when the report is quoted (versions 2 to 10 drop the ">"s).
  [
    new RegExp(
      String.raw`(?:^[ \t]{0,8}(?:>[ \t]{0,8}){1,8})?\(Use${GAP}\`node${GAP}--trace-(?:warnings|deprecation)${GAP}\.\.\.\`${GAP}${spaced("to show where the warning was created")}\)`,
      "gim",
    ),
    "",
    /--trace-/i,
  ],
  // Node 20 and later: "… is an experimental feature and might change at any time"; Node 16 to 19:
  // "… is an experimental feature. This feature could change at any time" (versions 3 to 10 drop
  // that second sentence).
  [
    new RegExp(String.raw`\b${spaced("is an experimental feature and might change at any time")}\b`, "gi"),
    "is an experimental feature. This feature could change at any time",
    /might\s{1,8}change/i,
  ],
  // The AppImage runtime's hint under "dlopen(): error loading libfuse.so.2": "AppImages require
  // FUSE to run. / You might still be able to extract the contents of this AppImage / if you run it
  // with the --appimage-extract option. / See <link> / for more information" (reporters copy all of
  // it, part of it or none).
  [
    // (A quoted report has a Markdown quote's ">" before each line.)
    /^[ \t`>]{0,20}AppImages require FUSE to run\.[^\n]{0,200}(?:\n[^\n]{0,200}){0,8}?\n?[^\n]{0,20}for more information\.?`?[ \t]*$/m,
    "",
    "AppImages require FUSE",
  ],
];

/** The version-10 form of one line that says the whole error. */
function formOfLine(line: string, name: string): string {
  const form = normalizeErrorTextV10(line);
  if (form !== "no such file or directory") return form;
  // Version 2 reads "sqlite3.h:" and "redis.h:" as a database driver's exception class and drops
  // them, leaving ENOENT's words alone (every such header one fingerprint, shared with any missing
  // file): the header is kept, in version 10's form (a path's directories are the user's).
  const named = normalizeErrorTextV10(name);
  return named === "" ? form : `${named} ${form}`;
}

/**
 * Clang's wording read as GCC's where nothing else is left: Xcode and editors show Clang's message
 * without "fatal error:" ("'React/RCTBridgeModule.h' file not found"), and version 10 gave that the
 * form of Clang's whole line; the rule above reads the line with GCC's words, so the form without it
 * follows (a fold of version 10's form: it joins, it cannot split).
 */
const FILE_NOT_FOUND_FORM = /^(\S{1,300}) file not found$/;
/** An exception's class before its message ("IOError: File not found") names no file. */
const CLASS_NAME = /(?:error|exception|warning|fault)$/;

/**
 * A quoted report's last lines left as nothing but Markdown's ">" once a hint after them is removed
 * (versions 2 to 10 drop such a line between two quoted ones, but keep its ">" at the end).
 * Scanned from the end, line by line: linear.
 */
export function withoutQuoteMarksAtTheEnd(text: string): string {
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    if (!/^[ \t>]*$/.test(text.slice(start, end))) break;
    end = start === 0 ? 0 : start - 1;
  }
  return text.slice(0, end);
}

/**
 * The version-11 normal form of an error report (without redaction; fingerprint.ts redacts first).
 * Lowercase, single-spaced, with typed placeholders for the volatile parts.
 */
export function normalizeErrorTextV11(errorText: string): string {
  const header = /fatal\s{1,8}error/i.test(errorText) ? missingHeader(errorText) : undefined;
  if (header) return formOfLine(`fatal error: ${header}: No such file or directory`, header);
  if (/error\s{0,8}while\s{0,8}loading/i.test(errorText)) {
    const m = MISSING_LIBRARY.exec(/[\r\n]/.test(errorText) ? errorText.replace(/\r?\n|\r/g, "") : errorText);
    if (m)
      return formOfLine(`error while loading shared libraries: ${m[1]}: cannot open shared object file: No such file or directory`, m[1]!);
  }
  const ruled = applyGated(errorText, V11_LINE_RULES);
  const stripped = ruled === errorText ? ruled : withoutQuoteMarksAtTheEnd(ruled);
  // A report that is nothing but what these rules remove keeps version 10's reading of it.
  const form = normalizeErrorTextV10(stripped.trim() === "" ? errorText : stripped);
  const clang = FILE_NOT_FOUND_FORM.exec(form);
  return clang && !CLASS_NAME.test(clang[1]!) ? `${clang[1]} no such file or directory` : form;
}
