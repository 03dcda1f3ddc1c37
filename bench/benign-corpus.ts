// False alarms on benign text (session 15): builds a corpus from the real text installed on this
// machine (no network) and runs the content pipeline a publish runs over it, chunked as trail fields
// are. Prints redactions per kind, screening findings per kind and trail rejections, and writes every
// hit with its origin to bench/out/benign-hits.json to read and classify.
//   node_modules/.bin/bun bench/benign-corpus.ts [--man-every N] [--out FILE]
//   node_modules/.bin/bun bench/benign-corpus.ts --risk [--out FILE]   (session 17: risk flags instead)
// --risk reads each source's command lines as trails of 6 commands and its config/example windows
// as patches named as their files, through assessRisk, prints flags per rule and writes every flag
// with its command and origin (default bench/out/benign-risk.json) to read and classify.
// Sources, in a fixed order (sorted paths; every Nth man page): README/CHANGELOG under node_modules,
// /usr/share/doc (README, NEWS, changelog, *.md, *.txt, examples; .gz read with zcat), man pages of
// sections 1, 5 and 8 (troff stripped), the repo's docs/ and README.md and package-lock.json, and
// the readable text files under /etc.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { detectInjection } from "../src/core/injection";
import { assessRisk } from "../src/core/risk";
import { redactText } from "../src/core/redaction";
import { injectionFindings, sensitiveFindings } from "../src/core/rejection";
import { redactTrail } from "../src/core/redaction";
import type { Trail } from "../src/core/trail";

const REPO = resolve(import.meta.dir, "..");
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const MAN_EVERY = Number(arg("--man-every", "8"));
const OUT = arg("--out", join(REPO, "bench/out/benign-hits.json"));
const MAX_FILE = 200_000;
const FIELD_MAX = 2000;

function walk(dir: string, depth: number, out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const n of names) {
    const p = join(dir, n);
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) {
      if (depth > 0 && n !== ".bin" && n !== ".cache") walk(p, depth - 1, out);
    } else if (st.isFile() && st.size > 0 && st.size < 2_000_000) out.push(p);
  }
}

function read(path: string): string | null {
  try {
    const buf = path.endsWith(".gz") ? execFileSync("zcat", [path], { maxBuffer: 16 << 20 }) : readFileSync(path);
    const text = buf.subarray(0, MAX_FILE).toString("utf8");
    if (text.includes("\u0000") || (text.match(/\uFFFD/g)?.length ?? 0) > 20) return null;
    return text;
  } catch {
    return null;
  }
}

const stripTroff = (t: string) =>
  t
    .split("\n")
    .filter((l) => !/^\.(?:\\"|TH|so|de|ig|if|ie|el|nr|ds|ft|ps|in|ti|sp|br|PD|ne|ad|na|hy|nh)\b/.test(l) && !l.startsWith("'\\\""))
    .map((l) => l.replace(/^\.(?:SH|SS|B|I|BR|IR|RB|RI|BI|IB|IP|TP|PP|LP|P|HP|RS|RE|nf|fi|EX|EE|UR|UE|MT|ME|SM|SB|OP)\b ?/, ""))
    .join("\n")
    .replace(/\\f[BIRPC]|\\f\(..|\\f\[[A-Z]*\]/g, "")
    .replace(/\\-/g, "-")
    .replace(/\\\(em|\\\(en/g, "-")
    .replace(/\\&|\\c|\\:|\\\//g, "")
    .replace(/\\e/g, "\\")
    .replace(/\\ /g, " ");

export interface Source {
  origin: string;
  text: string;
}

export function gatherSources(): Source[] {
  const out: Source[] = [];
  const add = (origin: string, text: string | null) => {
    if (text && text.trim()) out.push({ origin, text });
  };
  // node_modules READMEs and CHANGELOGs (scoped packages one level deeper)
  const nm: string[] = [];
  walk(join(REPO, "node_modules"), 3, nm);
  for (const p of nm)
    if (/\/(README|CHANGELOG|HISTORY)(\.md|\.markdown|\.txt)?$/i.test(p) && !p.includes("/.bin/")) add(p.slice(REPO.length + 1), read(p));
  // /usr/share/doc
  const doc: string[] = [];
  walk("/usr/share/doc", 3, doc);
  for (const p of doc)
    if (/\/(README[^/]*|NEWS[^/]*|changelog[^/]*|TODO[^/]*|[^/]*\.(md|txt)(\.gz)?)$/i.test(p) || p.includes("/examples/")) add(p, read(p));
  // man pages, every MAN_EVERY-th of sections 1, 5, 8
  for (const sec of ["man1", "man5", "man8"]) {
    const dir = join("/usr/share/man", sec);
    if (!existsSync(dir)) continue;
    const pages = readdirSync(dir).sort();
    for (let i = 0; i < pages.length; i += MAN_EVERY) {
      const t = read(join(dir, pages[i]!));
      add(join(dir, pages[i]!), t && stripTroff(t));
    }
  }
  // the repo's own docs and lockfile
  for (const p of [
    "README.md",
    ...readdirSync(join(REPO, "docs"))
      .sort()
      .map((n) => `docs/${n}`),
    "package-lock.json",
  ])
    if (p.endsWith(".md") || p.endsWith(".json")) add(p, read(join(REPO, p)));
  // /etc text files
  const etc: string[] = [];
  walk("/etc", 3, etc);
  for (const p of etc)
    if (!/\/(shadow|gshadow|ssl\/private|ssh\/ssh_host_[^/]*_key)$/.test(p) && !p.includes("/ssl/private/")) add(p, read(p));
  return out;
}

export interface Chunk {
  field: "error" | "step" | "command" | "patch";
  origin: string;
  text: string;
}

const COMMAND_START =
  /^\s*(?:\$ |# |sudo |curl |wget |npm |npx |yarn |pnpm |bun |git |apt(?:-get)? |pip3? |docker |kubectl |ssh |scp |rsync |export |cd |make |cargo |go |python3? |node |systemctl |openssl |gpg |tar |chmod |chown |mkdir |rm |cp |mv |ln |echo |cat |grep |sed |awk |find |env |set |mysql |psql |useradd |adduser )/;

export function chunk(src: Source): Chunk[] {
  const out: Chunk[] = [];
  const cut = (s: string) => (s.length > FIELD_MAX ? s.slice(0, FIELD_MAX) : s);
  const lines = src.text.split("\n");
  for (const l of lines) {
    const t = l.trim();
    if (t.length >= 8) out.push({ field: "error", origin: src.origin, text: cut(t) });
    if (COMMAND_START.test(l)) out.push({ field: "command", origin: src.origin, text: cut(t.replace(/^\$ /, "")) });
  }
  for (const para of src.text.split(/\n\s*\n/)) {
    const t = para.trim();
    if (t.length >= 20) out.push({ field: "step", origin: src.origin, text: cut(t) });
  }
  // Config and example files read as what a patch adds: 40-line windows
  if (/^\/etc\/|\/examples\/|package-lock\.json$/.test(src.origin)) {
    for (let i = 0; i < lines.length; i += 40) {
      const body = lines
        .slice(i, i + 40)
        .map((l) => `+${l}`)
        .join("\n");
      out.push({ field: "patch", origin: src.origin, text: `--- a/x\n+++ b/x\n@@ -0,0 +1,40 @@\n${body}`.slice(0, 20000) });
    }
  }
  return out;
}

/** A trail made of one source's chunks, as a publisher would fill it. */
function trailOf(chunks: Chunk[]): Trail {
  const pick = (f: Chunk["field"], n: number) =>
    chunks
      .filter((c) => c.field === f)
      .slice(0, n)
      .map((c) => c.text);
  const error = pick("error", 1)[0] ?? "Error";
  const patches = pick("patch", 2).map((diff, i) => ({ file_path: `config/file${i}.conf`, diff }));
  return {
    protocol_version: "1.0",
    problem: { error, description: pick("step", 1)[0], root_cause: pick("step", 2)[1] },
    solution: {
      summary: "Follow the documentation.",
      steps: pick("step", 6).slice(2),
      commands: pick("command", 6),
      code_patches: patches.length ? patches : undefined,
    },
  } as unknown as Trail;
}

/** Risk flags of the corpus's commands (trails of 6 per source) and patch windows, per rule. */
function riskRun(out: string): void {
  const t0 = performance.now();
  const trail = (commands: string[], patches: { file_path: string; diff: string }[]) =>
    ({
      protocol_version: "1.0",
      problem: { error: "E" },
      solution: { summary: "s", steps: ["x"], commands, code_patches: patches.length ? patches : undefined },
    }) as unknown as Trail;
  const perRule: Record<string, { commands: number; patches: number }> = {};
  const hits: { rule: string; level: string; field: string; origin: string; command: string | null; detail: string }[] = [];
  let commandTrails = 0;
  let flaggedTrails = 0;
  let windows = 0;
  for (const src of gatherSources()) {
    const chunks = chunk(src);
    const commands = chunks.filter((c) => c.field === "command").map((c) => c.text);
    const file = src.origin.replace(/^.*\//, "").replace(/\.gz$/, "");
    for (let k = 0; k < commands.length; k += 6) {
      const six = commands.slice(k, k + 6);
      const flags = assessRisk(trail(six, [])).flags;
      commandTrails++;
      if (flags.length) flaggedTrails++;
      for (const f of flags) {
        (perRule[f.flag] ??= { commands: 0, patches: 0 }).commands++;
        const command = f.command_index === null ? null : (six[f.command_index] ?? null);
        hits.push({ rule: f.flag, level: f.level, field: "command", origin: src.origin, command, detail: f.detail });
      }
    }
    for (const c of chunks.filter((x) => x.field === "patch")) {
      windows++;
      for (const f of assessRisk(trail([], [{ file_path: file, diff: c.text }])).flags) {
        (perRule[f.flag] ??= { commands: 0, patches: 0 }).patches++;
        hits.push({ rule: f.flag, level: f.level, field: "patch", origin: src.origin, command: null, detail: f.detail });
      }
    }
  }
  const summary = { commandTrails, flaggedTrails, windows, perRule, seconds: +((performance.now() - t0) / 1000).toFixed(1) };
  console.log(JSON.stringify(summary, null, 1));
  mkdirSync(join(REPO, "bench/out"), { recursive: true });
  writeFileSync(out, JSON.stringify({ summary, hits }, null, 1));
}

if (import.meta.main && process.argv.includes("--risk")) riskRun(arg("--out", join(REPO, "bench/out/benign-risk.json")));
else if (import.meta.main) {
  const t0 = performance.now();
  const sources = gatherSources();
  const bytes = sources.reduce((a, s) => a + s.text.length, 0);
  const redactions: Record<string, number> = {};
  const redactionChunks: Record<string, number> = {};
  const screening: Record<string, number> = {};
  const rejections: Record<string, number> = {};
  const hits: { type: string; kind: string; field: string; origin: string; text: string; result?: string }[] = [];
  const fieldCounts: Record<string, number> = {};
  let trails = 0;
  for (const src of sources) {
    const chunks = chunk(src);
    for (const c of chunks) {
      fieldCounts[c.field] = (fieldCounts[c.field] ?? 0) + 1;
      const r = redactText(c.text);
      for (const [k, n] of Object.entries(r.counts)) {
        redactions[k] = (redactions[k] ?? 0) + n;
        redactionChunks[`${c.field}:${k}`] = (redactionChunks[`${c.field}:${k}`] ?? 0) + 1;
        // Emails are most of the hits (changelog signatures): a sample of them is kept.
        if (k !== "email" || (redactions[k] ?? 0) % 1000 === 1)
          hits.push({
            type: "redaction",
            kind: k,
            field: c.field,
            origin: c.origin,
            text: c.text.length > 600 ? excerptAround(c.text, r.text) : c.text,
            result: r.text.length > 600 ? excerptAround(r.text, r.text) : r.text,
          });
      }
      if (c.field !== "error") {
        for (const f of detectInjection(c.text)) {
          screening[f.kind] = (screening[f.kind] ?? 0) + 1;
          hits.push({ type: "screening", kind: f.kind, field: c.field, origin: c.origin, text: c.text.slice(0, 600), result: f.detail });
        }
      }
    }
    // Trails of consecutive chunks, 20 chunks each, through the publish pipeline's content checks.
    for (let i = 0; i < chunks.length && i < 2000; i += 20) {
      const trail = redactTrail(trailOf(chunks.slice(i, i + 20))).value;
      trails++;
      for (const d of [...sensitiveFindings(trail), ...injectionFindings(trail)]) {
        const k = `${d.reason}:${d.detail.split(":")[0]!.slice(0, 40)}`;
        rejections[k] = (rejections[k] ?? 0) + 1;
        hits.push({ type: "rejection", kind: k, field: d.path, origin: src.origin, text: d.detail.slice(0, 400) });
      }
    }
  }
  const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  const summary = {
    sources: sources.length,
    megabytes: +(bytes / 1e6).toFixed(1),
    chunks: fieldCounts,
    trails,
    redactions: { total: sum(redactions), ...Object.fromEntries(Object.entries(redactions).sort((a, b) => b[1] - a[1])) },
    screening: { total: sum(screening), ...screening },
    rejections: { total: sum(rejections), ...rejections },
    seconds: +((performance.now() - t0) / 1000).toFixed(1),
  };
  console.log(JSON.stringify(summary, null, 1));
  mkdirSync(join(REPO, "bench/out"), { recursive: true });
  writeFileSync(OUT, JSON.stringify({ summary, hits }, null, 1));
}

function excerptAround(original: string, redacted: string): string {
  const i = redacted.indexOf("<redacted:");
  if (i < 0) return original.slice(0, 600);
  return original.slice(Math.max(0, i - 250), i + 350);
}
