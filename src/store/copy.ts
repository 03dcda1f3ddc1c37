// Copies a colony from one store to the other (`colony migrate --from-sqlite DIR`, `--to-sqlite
// DIR`): every table that carries state (copy-ports.ts COPIED_TABLES), then the vectors through the
// target's own vector store and the lexical index rebuilt from the trails by the target's own
// index, then the target's id counters and running totals; and checks every count at the end.
//
// Resumable: each batch is one transaction of the target that also records how far the copy got
// (the kv row migrate.copy), so a copy killed at any point continues where the last commit left
// it, with no row twice (and rows are written once per primary key anyway). The same record says
// which colony the target is a copy of: a target holding anything else is refused, never merged.
import { createHash } from "node:crypto";
import { lexicalFields } from "../core/enrichment";
import type { Trail } from "../core/trail";
import type { Logger } from "../log";
import { startProgress } from "../progress";
import {
  type CopiedTable,
  COPIED_TABLES,
  COPY_MARKER_KEY,
  type CopyRow,
  type CopySide,
  type CopyValue,
  type CopyWriter,
  MigrateError,
} from "./copy-ports";

export interface CopyOptions {
  /** Rows per transaction of the target. */
  batchSize: number;
  logger: Logger;
  /** Called inside each batch's transaction after its writes, before the commit (tests stop a copy there). */
  afterBatchWrite?: (batch: number) => Promise<void>;
  now?: () => number;
}

export interface CopyReport {
  /** Rows per table as verified in the target (vectors and lexical documents included). */
  counts: { name: string; rows: number }[];
  /** The copy continued one that had stopped. */
  resumed: boolean;
  /** The target already held a finished copy of this source: nothing was written. */
  alreadyCopied: boolean;
  /** The source had no vectors this version can read: the target's colony embeds at its first start. */
  vectorsCopied: boolean;
}

/** The copy's record in the target: which colony, and how far each phase got. */
interface CopyRecord {
  source: string;
  from: string;
  started_at: string;
  finished_at?: string;
  /** Per phase (a table, "vectors", "lexical"): the last key copied, or "done". */
  progress: Record<string, CopyValue[] | "done">;
}

/** Names a colony: a hash of its pseudonym secret (made once per colony and copied with it). */
async function colonyIdentity(side: CopySide): Promise<string> {
  const secret = await side.kvGet("pseudonym.secret");
  if (secret) return `colony:${createHash("sha256").update(secret).digest("hex").slice(0, 24)}`;
  return `store:${side.description}`;
}

const VECTORS = "vectors";
const LEXICAL = "lexical";

export async function copyColony(source: CopySide, target: CopySide, opts: CopyOptions): Promise<CopyReport> {
  const now = opts.now ?? Date.now;
  const unfinished = await source.kvGet(COPY_MARKER_KEY);
  if (unfinished && !(JSON.parse(unfinished) as CopyRecord).finished_at) {
    throw new MigrateError(
      "refused",
      `${source.description} holds an unfinished copy (of ${(JSON.parse(unfinished) as CopyRecord).from}): finish that copy before copying from it`,
    );
  }
  const identity = await colonyIdentity(source);
  const stored = await target.kvGet(COPY_MARKER_KEY);
  let record: CopyRecord | null = stored ? (JSON.parse(stored) as CopyRecord) : null;
  if (record && record.source !== identity) {
    throw new MigrateError(
      "refused",
      `${target.description} holds a copy of another colony (copied from ${record.from}), not of ${source.description}; nothing was copied`,
    );
  }
  const model = await source.vectorModel();
  if (record?.finished_at) {
    try {
      const counts = await verify(source, target, model !== null);
      return { counts, resumed: false, alreadyCopied: true, vectorsCopied: model !== null };
    } catch (err) {
      if (!(err instanceof MigrateError)) throw err;
      throw new MigrateError(
        "refused",
        `${target.description} holds a copy of this colony finished at ${record.finished_at}, which has changed since ` +
          `(${err.message}); copy into a new, empty database or directory. Nothing was copied`,
      );
    }
  }
  const resumed = record !== null;
  if (!record) {
    const held = await occupied(target);
    if (held.length > 0) {
      throw new MigrateError(
        "refused",
        `${target.description} already holds a colony (${held.join(", ")}) that is not a copy of ${source.description}; ` +
          "copy into a new, empty database or directory. Nothing was copied",
      );
    }
    record = { source: identity, from: source.description, started_at: new Date(now()).toISOString(), progress: {} };
    const first = record;
    await target.write((w) => w.setKv(COPY_MARKER_KEY, JSON.stringify(first)));
  }
  const rec = record;

  let total = model ? await source.countVectors() : 0;
  total += await source.countLexical();
  for (const table of COPIED_TABLES) total += await source.count(table);
  const progress = startProgress({ label: `copying to ${target.description}`, unit: "rows", total, logger: opts.logger });
  let batches = 0;
  /** One transaction of the target: the batch's writes and the record of how far the copy got. */
  const commit = async (phase: string, last: CopyValue[] | "done", write: (w: CopyWriter) => Promise<void>) => {
    await target.write(async (w) => {
      await write(w);
      await w.setKv(COPY_MARKER_KEY, JSON.stringify({ ...rec, progress: { ...rec.progress, [phase]: last } }));
      batches++;
      await opts.afterBatchWrite?.(batches);
    });
    rec.progress[phase] = last;
  };

  for (const table of COPIED_TABLES) {
    if (rec.progress[table.name] === "done") continue;
    const columns = await copiedColumns(source, target, table);
    const keyAt = table.key.map((k) => columns.indexOf(k));
    let after = (rec.progress[table.name] as CopyValue[] | undefined) ?? null;
    for (;;) {
      const rows = await source.read(table, columns, after, opts.batchSize);
      const done = rows.length < opts.batchSize;
      const last = rows.length ? keyAt.map((i) => rows[rows.length - 1]![i]!) : after;
      await commit(table.name, done ? "done" : last!, (w) => w.insert(table, columns, rows));
      progress.tick(rows.length);
      if (done) break;
      after = last;
    }
  }

  if (model && rec.progress[VECTORS] !== "done") {
    // The target's own vector store, for the source's model: a colony started on the target with
    // the same model finds its vectors current, another model rebuilds them as it would anyway.
    await target.openVectors(model);
    let after = Number((rec.progress[VECTORS] as CopyValue[] | undefined)?.[0] ?? 0);
    for (;;) {
      const rows = await source.readVectors(after, opts.batchSize);
      const done = rows.length < opts.batchSize;
      if (rows.length) after = rows[rows.length - 1]!.id;
      await commit(VECTORS, done ? "done" : [after], async (w) => {
        for (const r of rows) await w.upsertVector(r.id, r.vector);
      });
      progress.tick(rows.length);
      if (done) break;
    }
    await target.setReindexPending(await source.reindexPending());
  }

  if (rec.progress[LEXICAL] !== "done") {
    let after = Number((rec.progress[LEXICAL] as CopyValue[] | undefined)?.[0] ?? 0);
    for (;;) {
      const ids = await source.lexicalIds(after, opts.batchSize);
      const done = ids.length < opts.batchSize;
      if (ids.length) after = ids[ids.length - 1]!;
      const contents = await source.trailContents(ids);
      const docs = ids.map((id) => {
        const content = contents.get(id);
        if (content === undefined)
          throw new MigrateError("failed", `the source's lexical index holds trail ${id}, which has no row in trails`);
        return { id, doc: lexicalFields(JSON.parse(content) as Trail) };
      });
      await commit(LEXICAL, done ? "done" : [after], (w) => w.addLexical(docs));
      progress.tick(ids.length);
      if (done) break;
    }
  }

  await target.finish();
  const counts = await verify(source, target, model !== null);
  rec.finished_at = new Date(now()).toISOString();
  await target.write((w) => w.setKv(COPY_MARKER_KEY, JSON.stringify(rec)));
  progress.finish({ resumed });
  return { counts, resumed, alreadyCopied: false, vectorsCopied: model !== null };
}

/** The tables of the target that hold anything but settings: a target with any is another colony. */
async function occupied(target: CopySide): Promise<string[]> {
  const held: string[] = [];
  for (const table of COPIED_TABLES) {
    if (table.name === "kv") continue;
    const n = await target.count(table);
    if (n > 0) held.push(`${n} rows in ${table.name}`);
  }
  const vectors = await target.countVectors();
  if (vectors > 0) held.push(`${vectors} vectors`);
  return held;
}

/** The columns copied: the source's, each known to the target unless deliberately left out. */
async function copiedColumns(source: CopySide, target: CopySide, table: CopiedTable): Promise<string[]> {
  const theirs = new Set(await target.columns(table.name));
  const ours = await source.columns(table.name);
  if (ours.length === 0) throw new MigrateError("failed", `${source.description} has no table ${table.name}`);
  const unknown = ours.filter((c) => !theirs.has(c) && !(c in (table.dropped ?? {})));
  if (unknown.length > 0) {
    throw new MigrateError("failed", `${target.description} has no column ${unknown.join(", ")} in ${table.name}: the two schemas differ`);
  }
  return ours.filter((c) => theirs.has(c));
}

/** Every count of the target against the source's; a difference stops the command. */
async function verify(source: CopySide, target: CopySide, vectors: boolean): Promise<{ name: string; rows: number }[]> {
  const counts: { name: string; rows: number }[] = [];
  const differences: string[] = [];
  const compare = (name: string, expected: number, got: number) => {
    counts.push({ name, rows: got });
    if (expected !== got) differences.push(`${name}: ${expected} in the source, ${got} in the target`);
  };
  for (const table of COPIED_TABLES) {
    if (table.name === "kv") {
      // The target may hold settings of its own (a readiness probe): every source key must be there
      // with the source's value.
      const theirs = new Map((await readKv(target, table)).map((r) => [r[0], r[1]]));
      const ours = await readKv(source, table);
      const wrong = ours.filter((r) => theirs.get(r[0]) !== r[1]).map((r) => String(r[0]));
      counts.push({ name: "kv", rows: ours.length - wrong.length });
      if (wrong.length > 0)
        differences.push(`kv: ${wrong.length} keys missing or different in the target (${wrong.slice(0, 3).join(", ")})`);
      continue;
    }
    compare(table.name, await source.count(table), await target.count(table));
  }
  if (vectors) compare("vectors", await source.countVectors(), await target.countVectors());
  compare("lexical documents", await source.countLexical(), await target.countLexical());
  if (differences.length > 0) {
    throw new MigrateError("failed", `the copy does not match its source: ${differences.join("; ")}`);
  }
  return counts;
}

/** Every key and value of the kv table (as copied: the skipped keys left out). */
async function readKv(side: CopySide, table: CopiedTable): Promise<CopyRow[]> {
  const out: CopyRow[] = [];
  let after: CopyValue[] | null = null;
  for (;;) {
    const rows = await side.read(table, ["key", "value"], after, 10_000);
    out.push(...rows);
    if (rows.length < 10_000) return out;
    after = [rows[rows.length - 1]![0]!];
  }
}
