// Versioned schema migrations for the PostgreSQL adapter, applied at start. Each runs in its own
// transaction holding a transaction-level advisory lock, so replicas started together apply each
// one exactly once (the others wait, then see it applied). Never edit a released migration.
import type { SQL } from "bun";
import { SchemaTooNewError } from "../schema-version";

export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

/** The advisory lock key all migrations take ("colony" in ASCII, well clear of other users). */
export const MIGRATION_LOCK = 0x636f6c6f6e79;

export const PG_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    name: "initial schema",
    sql: `
      CREATE TABLE kv (
        key   text PRIMARY KEY,
        value text NOT NULL
      );

      -- seq is the integer id shared with the vector and full-text indexes; id is the public UUID.
      -- content is text, not jsonb: a trail comes back exactly as it was stored (key order kept).
      CREATE TABLE trails (
        seq              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id               text NOT NULL UNIQUE,
        status           text NOT NULL CHECK (status IN ('queued', 'indexed', 'merged', 'rejected')),
        fingerprint      text NOT NULL,
        error_type       text,
        content          text NOT NULL,
        content_hash     text NOT NULL,
        author           text NOT NULL,
        created_at       bigint NOT NULL,
        indexed_at       bigint,
        category         text,
        quality          double precision,
        risk             text,
        worked           integer NOT NULL DEFAULT 0,
        partially_worked integer NOT NULL DEFAULT 0,
        failed           integer NOT NULL DEFAULT 0,
        strength         double precision,
        merged_into      text,
        reasons          text,
        merge_key        text,
        reinforced_at    bigint,
        runtime          text,
        tokens_spent     double precision,
        -- The normalizer version the fingerprint was computed with (core/error-normalizer.ts).
        normalizer_version integer NOT NULL DEFAULT 1
      );
      CREATE INDEX trails_by_normalizer_version ON trails (normalizer_version, seq);
      CREATE INDEX trails_by_fingerprint ON trails (fingerprint, status, strength DESC);
      -- One indexed trail per merge key, enforced by the database across replicas.
      CREATE UNIQUE INDEX trails_by_merge_key ON trails (merge_key) WHERE status = 'indexed';
      CREATE INDEX trails_by_reinforcement ON trails (reinforced_at DESC, seq DESC) WHERE status = 'indexed';
      CREATE INDEX trails_feed_by_category ON trails (category, reinforced_at DESC, seq DESC) WHERE status = 'indexed';
      CREATE INDEX trails_feed_by_runtime ON trails (runtime, reinforced_at DESC, seq DESC) WHERE status = 'indexed';

      -- The durable enrichment queue: a row per trail waiting; deleted when the trail is final.
      -- A claimed job carries a lease: a replica that dies mid-job lets it run out.
      CREATE TABLE jobs (
        trail_seq   bigint PRIMARY KEY REFERENCES trails (seq) ON DELETE CASCADE,
        enqueued_at bigint NOT NULL,
        attempts    integer NOT NULL DEFAULT 0,
        last_error  text,
        leased_until bigint,
        leased_by   text
      );

      CREATE TABLE outcomes (
        id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        trail_seq bigint NOT NULL REFERENCES trails (seq) ON DELETE CASCADE,
        agent     text NOT NULL,
        -- The keyed pseudonym of the reporting address (never the address).
        client    text,
        outcome   text NOT NULL,
        counted   boolean NOT NULL,
        notes     text,
        model     text,
        at        bigint NOT NULL
      );
      CREATE INDEX outcomes_by_trail ON outcomes (trail_seq, at DESC);
      CREATE INDEX outcomes_by_agent ON outcomes (trail_seq, agent, at DESC);
      CREATE INDEX outcomes_by_time ON outcomes (at);
      CREATE INDEX outcomes_with_notes ON outcomes (trail_seq, at DESC) WHERE notes IS NOT NULL;
      CREATE INDEX outcomes_by_client ON outcomes (trail_seq, client, at) WHERE counted;

      CREATE TABLE merge_credits (
        trail_seq bigint NOT NULL REFERENCES trails (seq) ON DELETE CASCADE,
        agent     text NOT NULL,
        day       text NOT NULL,
        PRIMARY KEY (trail_seq, agent, day)
      );

      CREATE TABLE tombstones (
        trail_id     text PRIMARY KEY,
        content_hash text NOT NULL,
        removed_at   bigint NOT NULL
      );
      CREATE INDEX tombstones_by_hash ON tombstones (content_hash);
      CREATE INDEX tombstones_by_time ON tombstones (removed_at);

      CREATE TABLE events (
        id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind     text NOT NULL,
        agent    text NOT NULL,
        trail_id text,
        text     text NOT NULL,
        at       bigint NOT NULL
      );
      CREATE INDEX events_by_trail ON events (trail_id, id) WHERE trail_id IS NOT NULL;

      -- A fingerprint an older normalizer gave a stored trail, resolving to its current one.
      CREATE TABLE fingerprint_aliases (
        old_fp     text NOT NULL,
        new_fp     text NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (old_fp, new_fp)
      );
      CREATE INDEX fingerprint_aliases_by_time ON fingerprint_aliases (created_at);

      -- Hourly counts for the operator console's charts.
      CREATE TABLE series_hourly (
        hour  bigint NOT NULL,
        name  text NOT NULL,
        value bigint NOT NULL,
        PRIMARY KEY (hour, name)
      );

      -- The lexical index: the pre-tokenized documents as a tsvector (error line weight A, the
      -- explanation and fix weight B), built by the adapter so tokens are kept exactly as
      -- core/lexical.ts made them (PostgreSQL's parser would split identifiers at underscores).
      CREATE TABLE lexical (
        id  bigint PRIMARY KEY,
        doc tsvector NOT NULL
      );
      CREATE INDEX lexical_doc ON lexical USING gin (doc);
      -- Documents per term, so a query can keep only its rarest terms (core/lexical.ts).
      CREATE TABLE lexical_terms (
        term text PRIMARY KEY,
        docs integer NOT NULL
      );

      CREATE TABLE search_hourly (
        hour  bigint NOT NULL,
        label text NOT NULL,
        n     integer NOT NULL,
        PRIMARY KEY (hour, label)
      );

      CREATE TABLE drafts (
        token_hash  text PRIMARY KEY,
        state       text NOT NULL CHECK (state IN ('pending', 'published', 'discarded')),
        trail       text NOT NULL,
        fingerprint text NOT NULL,
        redactions  text NOT NULL,
        risk        text NOT NULL,
        author      text NOT NULL,
        created_at  bigint NOT NULL,
        expires_at  bigint NOT NULL,
        trail_id    text
      );
      CREATE INDEX drafts_by_expiry ON drafts (expires_at);


      CREATE TABLE stats_hourly (
        hour         bigint PRIMARY KEY,
        outcomes     bigint NOT NULL DEFAULT 0,
        tokens_saved bigint NOT NULL DEFAULT 0
      );
      CREATE TABLE agent_activity (
        agent text PRIMARY KEY,
        at    bigint NOT NULL
      );
      CREATE INDEX agent_activity_by_time ON agent_activity (at);

      -- Vectors: the float vector (little-endian float32) and its binary code. Every replica holds
      -- the codes in memory (store/hamming-index.ts) and follows changes by writing transaction:
      -- txid says which transaction last wrote a row, so a replica catches up with every row
      -- written by transactions not yet finished when it last looked (see postgres/vectors.ts).
      CREATE TABLE vectors (
        id        bigint PRIMARY KEY,
        embedding bytea NOT NULL,
        code      bytea NOT NULL,
        txid      xid8 NOT NULL DEFAULT pg_current_xact_id()
      );
      CREATE INDEX vectors_by_txid ON vectors (txid);
      CREATE TABLE vector_removals (
        id   bigint NOT NULL,
        txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        at   timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX vector_removals_by_txid ON vector_removals (txid);
      -- Wakes the other replicas' catch-up; delivered at commit, once per transaction.
      CREATE FUNCTION colony_vectors_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_notify('colony_vectors', ''); RETURN NULL; END $$;
      CREATE TRIGGER vectors_changed AFTER INSERT OR UPDATE OR DELETE ON vectors
        FOR EACH STATEMENT EXECUTE FUNCTION colony_vectors_changed();
    `,
  },
  {
    version: 2,
    name: "shared quota windows",
    sql: `
      -- Fixed-window quota counters shared by every replica (postgres/seams.ts PgQuotaCounters):
      -- one row per quota, client key and window, its start aligned to the window length.
      CREATE TABLE quota_windows (
        quota        text NOT NULL,
        key          text NOT NULL,
        window_start bigint NOT NULL,
        window_end   bigint NOT NULL,
        used         integer NOT NULL,
        PRIMARY KEY (quota, key, window_start)
      );
      CREATE INDEX quota_windows_by_end ON quota_windows (window_end);
    `,
  },
  {
    version: 3,
    name: "lexical statistics for BM25",
    sql: `
      -- Lexical matches are scored by FTS5's BM25 (core/bm25.ts, postgres/lexical.ts), which needs
      -- each document's token count, how many of them are the error line's (positions 1 to
      -- error_tokens), and the index's document and token totals, kept exact by every writer
      -- (under the lexical writers' lock, so the one totals row is never contended further).
      ALTER TABLE lexical ADD COLUMN error_tokens integer, ADD COLUMN tokens integer;
      UPDATE lexical SET
        error_tokens = coalesce((SELECT sum(cardinality(positions)) FROM unnest(ts_filter(doc, '{a}'))), 0),
        tokens = coalesce((SELECT sum(cardinality(positions)) FROM unnest(doc)), 0);
      ALTER TABLE lexical ALTER COLUMN error_tokens SET NOT NULL, ALTER COLUMN tokens SET NOT NULL;
      CREATE TABLE lexical_totals (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        docs      bigint NOT NULL,
        tokens    bigint NOT NULL
      );
      INSERT INTO lexical_totals (docs, tokens) SELECT count(*), coalesce(sum(tokens), 0) FROM lexical;
    `,
  },
  {
    version: 4,
    name: "fingerprint changes by transaction",
    sql: `
      -- Fingerprints whose lookup answer may have changed, by writing transaction (as vectors):
      -- a replica reads the rows of transactions not finished when it last looked before it
      -- answers a lookup from its cache (postgres/fingerprint-feed.ts), so once any replica has
      -- reported a change, lookups on every replica show it. Written by triggers, so no write
      -- path can forget it; rows older than an hour are deleted as replicas catch up.
      CREATE TABLE fingerprint_changes (
        fingerprint text NOT NULL,
        txid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
        at          timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX fingerprint_changes_by_txid ON fingerprint_changes (txid);
      CREATE INDEX fingerprint_changes_by_time ON fingerprint_changes (at);
      -- A lookup shows indexed trails only: a queued trail's insert changes no answer.
      CREATE FUNCTION colony_trail_fingerprint_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP <> 'INSERT' THEN
            INSERT INTO fingerprint_changes (fingerprint) VALUES (OLD.fingerprint);
          END IF;
          IF (TG_OP = 'INSERT' AND NEW.status = 'indexed') OR (TG_OP = 'UPDATE' AND NEW.fingerprint <> OLD.fingerprint) THEN
            INSERT INTO fingerprint_changes (fingerprint) VALUES (NEW.fingerprint);
          END IF;
          RETURN NULL;
        END $$;
      CREATE TRIGGER trails_fingerprint_changed AFTER INSERT OR UPDATE OR DELETE ON trails
        FOR EACH ROW EXECUTE FUNCTION colony_trail_fingerprint_changed();
      CREATE FUNCTION colony_alias_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO fingerprint_changes (fingerprint) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.old_fp ELSE NEW.old_fp END);
          RETURN NULL;
        END $$;
      CREATE TRIGGER fingerprint_aliases_changed AFTER INSERT OR DELETE ON fingerprint_aliases
        FOR EACH ROW EXECUTE FUNCTION colony_alias_changed();
    `,
  },
  {
    version: 5,
    name: "lexical postings of rare terms",
    sql: `
      -- Postings of the rare terms (postgres/lexical.ts): term, document, its field-weighted count
      -- of the term (error line 2, the rest 1: core/bm25.ts FIELD_WEIGHTS) and its token count, so a
      -- query of rare terms is scored by BM25 from the index alone and only the best few documents
      -- leave the database. lexical_terms.postings: every document with the term has its posting;
      -- a term loses them (for good) once in more than 2% of the documents, or 1,000 if more.
      -- Documents indexed before take the counts their tsvector holds (positions up to
      -- error_tokens are the error line's).
      ALTER TABLE lexical_terms ADD COLUMN postings boolean NOT NULL DEFAULT true;
      UPDATE lexical_terms SET postings = docs <= greatest(0.02 * (SELECT docs FROM lexical_totals), 1000);
      CREATE TABLE lexical_postings (
        term   text NOT NULL,
        id     bigint NOT NULL,
        count  real NOT NULL,
        tokens integer NOT NULL,
        PRIMARY KEY (term, id) INCLUDE (count, tokens)
      );
      INSERT INTO lexical_postings (term, id, count, tokens)
      SELECT u.lexeme, l.id,
        (SELECT coalesce(sum(CASE WHEN p <= l.error_tokens THEN 2 ELSE 1 END), 1) FROM unnest(u.positions) p), l.tokens
      FROM lexical l CROSS JOIN LATERAL unnest(l.doc) u JOIN lexical_terms t ON t.term = u.lexeme AND t.postings;
    `,
  },
  {
    version: 6,
    name: "quota uses counted in batches",
    sql: `
      -- A replica counts every use that arrives while its previous quota statement runs in one
      -- upsert (postgres/seams.ts PgQuotaCounters): each row asks for n uses against the limit it
      -- carries (quota_limit), is granted what is left below it under the row lock, and says how
      -- many in granted, so the replica hands each waiting use the count it would have had alone.
      ALTER TABLE quota_windows ADD COLUMN granted integer NOT NULL DEFAULT 0,
        ADD COLUMN quota_limit integer NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 7,
    name: "merge credits per client address",
    sql: `
      -- Who published a trail, as the address pseudonym of the publishing request (null on older
      -- rows), and the client each merge credit went to: one address earns at most one credit
      -- per trail per day, whatever agent ids it sends (older credits count as their agent's).
      ALTER TABLE trails ADD COLUMN client text;
      ALTER TABLE merge_credits ADD COLUMN client text NOT NULL DEFAULT '';
      UPDATE merge_credits SET client = agent;
      CREATE UNIQUE INDEX merge_credits_by_client ON merge_credits (trail_seq, client, day);
    `,
  },
  {
    version: 8,
    name: "search events by time",
    sql: `
      -- Search events are purged after two days (every search appends one): the purge finds the
      -- old ones through this index instead of reading the whole table.
      CREATE INDEX events_searches_by_time ON events (at) WHERE kind = 'search';
    `,
  },
  {
    version: 9,
    name: "uncounted reports per client address",
    sql: `
      -- An address's uncounted outcome reports of the day are counted before another is kept
      -- (src/core/outcome-counting.ts UNCOUNTED_KEPT_PER_CLIENT_PER_DAY).
      CREATE INDEX outcomes_uncounted_by_client ON outcomes (client, at) WHERE NOT counted;
    `,
  },
  {
    version: 10,
    name: "hot labels ranked by distinct clients",
    sql: `
      -- /v1/stats ranks the hot labels by how many different clients (address pseudonyms) searched
      -- each in the window, not by how often (src/core/hot-label.ts): one address's 100 labelled
      -- searches an hour put any token at the top. search_clients holds each label's clients with
      -- the hour of their latest search; search_hourly.clients counts, per hour, the clients whose
      -- latest search of the label fell in it, so the window's sum is its distinct clients and
      -- /v1/stats still reads one row per label and hour. prev_hour is the hour a client's latest
      -- search had before the one that moved it (the upsert reads it back to move the count).
      ALTER TABLE search_hourly ADD COLUMN clients integer NOT NULL DEFAULT 0;
      -- Earlier counts did not record their clients: each label had at least one, counted at its
      -- latest hour (the fewest it can have had).
      UPDATE search_hourly SET clients = 1 WHERE (label, hour) IN (SELECT label, max(hour) FROM search_hourly GROUP BY label);
      CREATE TABLE search_clients (
        label     text NOT NULL,
        client    text NOT NULL,
        hour      bigint NOT NULL,
        prev_hour bigint,
        PRIMARY KEY (label, client)
      );
      CREATE INDEX search_clients_by_hour ON search_clients (hour);
    `,
  },
  {
    version: 11,
    name: "content rules version",
    sql: `
      -- The content rules version (src/core/content-rules.ts) each trail's content was last redacted
      -- and screened with. Rows stored before read 0: the next start re-checks each of them once.
      ALTER TABLE trails ADD COLUMN content_rules_version integer NOT NULL DEFAULT 0;
      CREATE INDEX trails_by_content_rules_version ON trails (content_rules_version, seq);
    `,
  },
  {
    version: 12,
    name: "outcome notes content rules version",
    sql: `
      -- The content rules version each report's notes were last redacted and screened with. Rows
      -- stored before read 0: the next start re-checks each note once (reports without notes have
      -- nothing to check, and the index leaves them out).
      ALTER TABLE outcomes ADD COLUMN content_rules_version integer NOT NULL DEFAULT 0;
      CREATE INDEX outcomes_notes_by_content_rules_version ON outcomes (content_rules_version, id) WHERE notes IS NOT NULL;
    `,
  },
  {
    version: 13,
    name: "hourly counters spread over slots",
    sql: `
      -- Every search added to its hour's one series_hourly row (and its label's search_hourly row),
      -- every counted report to the hour's stats_hourly row: one row lock that the transactions of
      -- every replica queued on until each committed, WAL flush included. Each hour's counts are
      -- now added to slot rows (a transaction adds to its connection's slot, repositories.ts
      -- COUNTER_SLOTS), read as the sum of the key's row and its slot rows, and folded into the
      -- key's row once the hour is over. The counter tables keep their rows and keys: a replica of
      -- the release before, still serving during a rolling upgrade, counts into them as it did.
      -- (This migration is unreleased in this form only: an earlier draft of it, never in a
      -- release, added the slot to the counter tables' own keys.)
      CREATE TABLE series_hourly_slots (
        hour  bigint NOT NULL,
        name  text NOT NULL,
        slot  smallint NOT NULL,
        value bigint NOT NULL,
        PRIMARY KEY (hour, name, slot)
      );
      CREATE TABLE search_hourly_slots (
        hour    bigint NOT NULL,
        label   text NOT NULL,
        slot    smallint NOT NULL,
        n       integer NOT NULL,
        clients integer NOT NULL DEFAULT 0,
        PRIMARY KEY (hour, label, slot)
      );
      CREATE TABLE stats_hourly_slots (
        hour         bigint NOT NULL,
        slot         smallint NOT NULL,
        outcomes     bigint NOT NULL DEFAULT 0,
        tokens_saved bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (hour, slot)
      );
    `,
  },
  {
    version: 14,
    name: "tombstones by merge key",
    sql: `
      -- The merge key of a removed trail that was indexed: its fix stays removed for the tombstone's
      -- 90 days, not only its exact content (a copy with one changed byte was indexed again). Rows
      -- stored before read NULL and match by content hash only, as they did; a replica of the release
      -- before, still serving in a rolling upgrade, writes tombstones without it (its INSERT names
      -- its columns) and checks content hashes only.
      ALTER TABLE tombstones ADD COLUMN merge_key text;
      CREATE INDEX tombstones_by_merge_key ON tombstones (merge_key) WHERE merge_key IS NOT NULL;
    `,
  },
];

/**
 * Applies every migration newer than the database's version, each in one transaction under the
 * migration lock. Returns the version the database is at. A database newer than this code is
 * refused (an older replica must not run against a schema it does not know).
 */
export async function migratePostgres(sql: SQL, migrations: PgMigration[] = PG_MIGRATIONS): Promise<number> {
  const newest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  await sql.begin(async (tx) => {
    // A migration (or the wait for another replica's) may take longer than a request is allowed to.
    await tx`SET LOCAL statement_timeout = 0`;
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
  });
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    await sql.begin(async (tx) => {
      await tx`SET LOCAL statement_timeout = 0`;
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      const [{ current }] = await tx`SELECT coalesce(max(version), 0)::int AS current FROM schema_migrations`;
      if (current > newest) {
        throw new SchemaTooNewError(current, newest, "the PostgreSQL database");
      }
      if (m.version <= current) return;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
    });
  }
  const [{ current }] = await sql`SELECT coalesce(max(version), 0)::int AS current FROM schema_migrations`;
  if (current > newest) {
    throw new SchemaTooNewError(current, newest, "the PostgreSQL database");
  }
  return current;
}

/** The version the database's schema is at: 0 before the first migration. */
export async function postgresSchemaVersion(sql: SQL): Promise<number> {
  const [{ found }] = await sql`SELECT to_regclass('schema_migrations') IS NOT NULL AS found`;
  if (!found) return 0;
  const [{ current }] = await sql`SELECT coalesce(max(version), 0)::int AS current FROM schema_migrations`;
  return current;
}
