// The PostgreSQL side of `colony migrate`: the schema migrations run alone, and a database as the
// source or the target of a copy between the stores (../copy.ts). Rows go in through
// json_populate_recordset, so each value is converted by the table's own column types; the
// lexical index and the vectors are written by this adapter's own classes.
import type { SQL } from "bun";
import {
  type CopiedTable,
  type CopyRow,
  type CopySide,
  type CopyValue,
  type CopyWriter,
  MigrateError,
  type VectorModel,
} from "../copy-ports";
import { parseDatabaseUrl } from "../../core/database-url";
import { errorMessage } from "../../core/error-message";
import { openPool } from "./hosts";
import { PgLexicalIndex } from "./lexical";
import { migratePostgres, PG_MIGRATIONS, postgresSchemaVersion } from "./migrations";
import { SchemaTooNewError } from "../schema-version";
import { COUNTER_SLOT_TABLES, countedRows, num, PgKeyValueStore } from "./repositories";
import { asFloats, PgVectorStore, REINDEX_PENDING_KEY, SIGNATURE_KEY, storedVectorModel } from "./vectors";

/**
 * Counter tables whose current hours PostgreSQL spreads over slot rows in their slot tables
 * (migration 13, repositories.ts COUNTER_SLOT_TABLES), where SQLite keeps one row per key: as the
 * source, a key's row and its slot rows are read as one row, their sum (what the colony reads); as
 * the target, each row goes into the counter table (no slot rows).
 */
const SLOTTED_TABLES = new Set(Object.keys(COUNTER_SLOT_TABLES));

/** Held (per session) by a copy for its whole run, so two copies never write one database at once. */
const COPY_LOCK = 0x636f6c636f70;
/** The application_name of a colony's connections (store.ts), and of this command's. */
const COLONY_APPLICATION = "colony";
const MIGRATE_APPLICATION = "colony-migrate";

/** The database a URL names, for messages: user, host(s) and database, never the password. */
export function describeDatabase(url: string): string {
  try {
    return `PostgreSQL ${parseDatabaseUrl(url).description}`;
  } catch {
    return "PostgreSQL (COLONY_DATABASE_URL)";
  }
}

/** A small pool; with several hosts in the URL, on the first that suits (./hosts.ts), for the whole command. */
async function connect(url: string): Promise<SQL> {
  let sql: SQL | null = null;
  try {
    sql = (
      await openPool(parseDatabaseUrl(url), {
        max: 2,
        connectionTimeout: 5,
        idleTimeout: 60,
        connection: { application_name: MIGRATE_APPLICATION },
      })
    ).sql;
    await sql`SELECT 1`;
  } catch (err) {
    await sql?.close({ timeout: 0 }).catch(() => {});
    throw new MigrateError("unavailable", `cannot connect to ${describeDatabase(url)}: ${errorMessage(err)}`, { cause: err });
  }
  return sql;
}

const tooNew = (err: unknown) => err instanceof SchemaTooNewError;

export interface SchemaMigration {
  from: number;
  to: number;
  applied: { version: number; name: string }[];
}

/** Applies the migrations under the same advisory lock as a starting replica, and says which. */
async function migrateSchema(sql: SQL, url: string): Promise<SchemaMigration> {
  const from = await postgresSchemaVersion(sql);
  let to: number;
  try {
    to = await migratePostgres(sql);
  } catch (err) {
    if (tooNew(err)) throw new MigrateError("refused", `${describeDatabase(url)}: ${errorMessage(err)}`);
    throw err;
  }
  const applied = PG_MIGRATIONS.filter((m) => m.version > from && m.version <= to).map(({ version, name }) => ({ version, name }));
  return { from, to, applied };
}

/** `colony migrate` on PostgreSQL: the schema migrations alone. */
export async function migratePostgresDatabase(url: string): Promise<SchemaMigration & { description: string }> {
  const sql = await connect(url);
  try {
    return { ...(await migrateSchema(sql, url)), description: describeDatabase(url) };
  } finally {
    await sql.close({ timeout: 5 });
  }
}

type Reserved = Awaited<ReturnType<SQL["reserve"]>>;

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Integers, reals and booleans as the copy carries them (int8 comes back as a string). */
function plain(value: unknown): CopyValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "bigint") return Number(value);
  return value as CopyValue;
}

/** Opens the database as the source or the target of a copy; the colony's replicas must be stopped. */
export async function openPostgresCopySide(url: string, role: "source" | "target"): Promise<CopySide> {
  const description = describeDatabase(url);
  const sql = await connect(url);
  let lock: Reserved | null = null;
  try {
    if (role === "source" && (await postgresSchemaVersion(sql)) === 0) {
      throw new MigrateError("usage", `${description} holds no colony (it has no colony schema)`);
    }
    const [{ replicas }] = await sql`SELECT count(*)::int AS replicas FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = ${COLONY_APPLICATION} AND pid <> pg_backend_pid()`;
    if (replicas > 0) {
      throw new MigrateError("refused", `${description} is in use by a running colony (${replicas} connections): stop its replicas first`);
    }
    lock = await sql.reserve();
    const [{ locked }] = await lock`SELECT pg_try_advisory_lock(${COPY_LOCK}) AS locked`;
    if (!locked) throw new MigrateError("refused", `another colony migrate is copying from or into ${description}`);
    await migrateSchema(sql, url);
  } catch (err) {
    lock?.release();
    await sql.close({ timeout: 0 }).catch(() => {});
    throw err;
  }
  return new PgCopySide(sql, lock, description);
}

class PgCopySide implements CopySide {
  readonly kind = "postgres" as const;
  private readonly kv: PgKeyValueStore;
  private readonly types = new Map<string, Map<string, string>>();
  private vectors: PgVectorStore | null = null;

  constructor(
    private readonly sql: SQL,
    private readonly lock: Reserved,
    readonly description: string,
  ) {
    this.kv = new PgKeyValueStore(sql);
  }

  private async columnTypes(table: string): Promise<Map<string, string>> {
    let types = this.types.get(table);
    if (!types) {
      const rows = await this.sql`SELECT column_name, data_type FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY ordinal_position`;
      types = new Map(rows.map((r: any) => [r.column_name, r.data_type]));
      this.types.set(table, types);
    }
    return types;
  }

  async columns(table: string): Promise<string[]> {
    const columns = [...(await this.columnTypes(table)).keys()];
    return SLOTTED_TABLES.has(table) ? columns.filter((c) => COUNTER_SLOT_TABLES[table]!.columns.includes(c)) : columns;
  }

  /** The condition leaving out the table's skipped keys, with its parameters from $n on. */
  private skip(table: CopiedTable, params: unknown[]): string[] {
    return (table.skipPrefixes ?? []).map((prefix) => {
      params.push(prefix);
      return `NOT starts_with(${ident(table.key[0]!)}, $${params.length})`;
    });
  }

  async read(table: CopiedTable, columns: string[], after: CopyValue[] | null, limit: number): Promise<CopyRow[]> {
    const params: unknown[] = [];
    const where = this.skip(table, params);
    const key = table.key.map(ident).join(", ");
    if (after) {
      const marks = after.map((v) => (params.push(v), `$${params.length}`));
      where.push(`(${key}) > (${marks.join(", ")})`);
    }
    params.push(limit);
    const types = await this.columnTypes(table.name);
    const slotted = SLOTTED_TABLES.has(table.name);
    // A slotted key's counts are summed (saturating at MAX_SAFE_INTEGER, as the colony reads them).
    const selected = columns.map((c) =>
      slotted && !table.key.includes(c) ? `least(sum(${ident(c)}), ${Number.MAX_SAFE_INTEGER})::bigint` : ident(c),
    );
    const bigints = columns.map((c) => types.get(c) === "bigint" || (slotted && !table.key.includes(c)));
    const rows = await this.sql
      .unsafe(
        `SELECT ${selected.join(", ")} FROM ${slotted ? countedRows(table.name) : ident(table.name)}
         ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ${slotted ? `GROUP BY ${key}` : ""}
         ORDER BY ${key} LIMIT $${params.length}`,
        params,
      )
      .values();
    return rows.map((row: unknown[]) => row.map((v, i) => (bigints[i] && v !== null ? safeNumber(v) : plain(v))));
  }

  async count(table: CopiedTable): Promise<number> {
    const params: unknown[] = [];
    const where = this.skip(table, params);
    const [{ n }] = await this.sql.unsafe(
      SLOTTED_TABLES.has(table.name)
        ? `SELECT count(*)::float8 AS n FROM (SELECT 1 FROM ${countedRows(table.name)} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
           GROUP BY ${table.key.map(ident).join(", ")}) AS keys`
        : `SELECT count(*)::float8 AS n FROM ${ident(table.name)} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`,
      params,
    );
    return n;
  }

  kvGet(key: string): Promise<string | null> {
    return this.kv.get(key);
  }

  async vectorModel(): Promise<VectorModel | null> {
    return storedVectorModel(await this.kv.get(SIGNATURE_KEY));
  }

  async reindexPending(): Promise<boolean> {
    return (await this.kv.get(REINDEX_PENDING_KEY)) === "1";
  }

  async readVectors(afterId: number, limit: number) {
    const rows = await this.sql`SELECT id, embedding FROM vectors WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`.values();
    // Copied: the row's buffer may not be 4-byte aligned.
    return rows.map(([id, embedding]: [unknown, Uint8Array]) => ({
      id: num(id),
      vector: asFloats(embedding),
    }));
  }

  async countVectors(): Promise<number> {
    const [{ n }] = await this.sql`SELECT count(*)::float8 AS n FROM vectors`;
    return n;
  }

  async lexicalIds(afterId: number, limit: number): Promise<number[]> {
    const rows = await this.sql`SELECT id FROM lexical WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`.values();
    return rows.map(([id]: [unknown]) => num(id));
  }

  async countLexical(): Promise<number> {
    const [{ n }] = await this.sql`SELECT count(*)::float8 AS n FROM lexical`;
    return n;
  }

  async trailContents(seqs: number[]): Promise<Map<number, string>> {
    const rows = await this.sql`SELECT seq, content FROM trails WHERE seq = ANY(${seqs}::bigint[])`.values();
    return new Map(rows.map(([seq, content]: [unknown, string]) => [num(seq), content]));
  }

  async openVectors(model: VectorModel): Promise<void> {
    this.vectors = (await PgVectorStore.open(this.sql, this.kv, model)).store;
  }

  async setReindexPending(pending: boolean): Promise<void> {
    if (pending) await this.kv.set(REINDEX_PENDING_KEY, "1");
    else await this.kv.delete(REINDEX_PENDING_KEY);
  }

  async write(fn: (w: CopyWriter) => Promise<void>): Promise<void> {
    await this.sql.begin(async (conn) => {
      const kv = new PgKeyValueStore(conn);
      const writer: CopyWriter = {
        insert: async (table, columns, rows) => {
          if (rows.length === 0) return;
          const list = columns.map(ident).join(", ");
          const others = columns.filter((c) => !table.key.includes(c));
          const onConflict =
            table.overwrite && others.length
              ? `DO UPDATE SET ${others.map((c) => `${ident(c)} = excluded.${ident(c)}`).join(", ")}`
              : "DO NOTHING";
          const objects = rows.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])));
          // OVERRIDING SYSTEM VALUE: the identity columns (trails.seq, outcomes.id, events.id) keep the
          // source's ids; finish() moves their sequences past them.
          await conn.unsafe(
            `INSERT INTO ${ident(table.name)} (${list}) OVERRIDING SYSTEM VALUE
             SELECT ${list} FROM json_populate_recordset(NULL::${ident(table.name)}, $1::text::json)
             ON CONFLICT (${table.key.map(ident).join(", ")}) ${onConflict}`,
            [JSON.stringify(objects, withoutNul)],
          );
        },
        upsertVector: async (id, vector) => {
          if (!this.vectors) throw new Error("the target's vectors were not opened");
          await this.vectors.on(conn, kv).upsert(id, vector);
        },
        addLexical: async (docs) => {
          await new PgLexicalIndex(conn, true).addMany(docs);
        },
        setKv: (key, value) => kv.set(key, value),
      };
      await fn(writer);
    });
  }

  async finish(): Promise<void> {
    for (const [table, column] of [
      ["trails", "seq"],
      ["outcomes", "id"],
      ["events", "id"],
    ] as const) {
      await this.sql.unsafe(
        `SELECT setval(pg_get_serial_sequence('${table}', '${column}'), coalesce((SELECT max(${column}) FROM ${table}), 0) + 1, false)`,
      );
    }
  }

  async close(): Promise<void> {
    try {
      await this.lock`SELECT pg_advisory_unlock(${COPY_LOCK})`.catch(() => {});
      this.lock.release();
    } finally {
      await this.sql.close({ timeout: 5 });
    }
  }
}

function safeNumber(v: unknown): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`the integer ${String(v)} does not fit a double exactly`);
  return n;
}

/**
 * PostgreSQL text cannot hold U+0000. A colony refuses it at input, but a SQLite colony may hold it
 * from before it did (in an error_type, a search label, an event's text): copied, it becomes
 * U+FFFD, as a lone surrogate does at input, rather than failing the whole copy.
 */
function withoutNul(_key: string, value: unknown): unknown {
  return typeof value === "string" && value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value;
}
