// Versioned schema migrations, applied in order at start inside one transaction each.
// Never edit a released migration: add a new one.
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "initial schema",
    sql: `
      CREATE TABLE kv (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;

      -- seq is the integer id shared with the vector and full-text indexes; id is the public UUID.
      CREATE TABLE trails (
        seq              INTEGER PRIMARY KEY,
        id               TEXT NOT NULL UNIQUE,
        status           TEXT NOT NULL CHECK (status IN ('queued', 'indexed', 'merged', 'rejected')),
        fingerprint      TEXT NOT NULL,
        error_type       TEXT,
        content          TEXT NOT NULL,
        content_hash     TEXT NOT NULL,
        author           TEXT NOT NULL,
        created_at       INTEGER NOT NULL,
        indexed_at       INTEGER,
        category         TEXT,
        quality          REAL,
        risk             TEXT,
        worked           INTEGER NOT NULL DEFAULT 0,
        partially_worked INTEGER NOT NULL DEFAULT 0,
        failed           INTEGER NOT NULL DEFAULT 0,
        strength         REAL,
        merged_into      TEXT,
        reasons          TEXT,
        merge_key        TEXT,
        reinforced_at    INTEGER
      ) STRICT;
      CREATE INDEX trails_by_fingerprint ON trails (fingerprint, status, strength DESC);
      CREATE INDEX trails_by_merge_key ON trails (merge_key) WHERE status = 'indexed';
      CREATE INDEX trails_by_reinforcement ON trails (reinforced_at DESC, seq DESC) WHERE status = 'indexed';

      -- The durable enrichment queue: a row per trail waiting; deleted when the trail is final.
      CREATE TABLE jobs (
        trail_seq   INTEGER PRIMARY KEY REFERENCES trails (seq) ON DELETE CASCADE,
        enqueued_at INTEGER NOT NULL,
        attempts    INTEGER NOT NULL DEFAULT 0,
        last_error  TEXT
      ) STRICT;

      CREATE TABLE outcomes (
        id        INTEGER PRIMARY KEY,
        trail_seq INTEGER NOT NULL REFERENCES trails (seq) ON DELETE CASCADE,
        agent     TEXT NOT NULL,
        outcome   TEXT NOT NULL,
        counted   INTEGER NOT NULL,
        notes     TEXT,
        model     TEXT,
        at        INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX outcomes_by_trail ON outcomes (trail_seq, at DESC);
      CREATE INDEX outcomes_by_agent ON outcomes (trail_seq, agent, at DESC);
      CREATE INDEX outcomes_by_time ON outcomes (at);

      -- One merge credit per agent per trail per UTC day.
      CREATE TABLE merge_credits (
        trail_seq INTEGER NOT NULL REFERENCES trails (seq) ON DELETE CASCADE,
        agent     TEXT NOT NULL,
        day       TEXT NOT NULL,
        PRIMARY KEY (trail_seq, agent, day)
      ) STRICT;

      -- What stays of a removed trail: its id and content hash, for 90 days.
      CREATE TABLE tombstones (
        trail_id     TEXT PRIMARY KEY,
        content_hash TEXT NOT NULL,
        removed_at   INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX tombstones_by_hash ON tombstones (content_hash);
      CREATE INDEX tombstones_by_time ON tombstones (removed_at);

      CREATE TABLE events (
        id       INTEGER PRIMARY KEY,
        kind     TEXT NOT NULL,
        agent    TEXT NOT NULL,
        trail_id TEXT,
        text     TEXT NOT NULL,
        at       INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: "lexical index and search counters",
    sql: `
      -- Contentless: the documents are pre-tokenized by core/lexical.ts; rowid is trails.seq.
      CREATE VIRTUAL TABLE lexical USING fts5(
        error, body, content = '', contentless_delete = 1, tokenize = "unicode61 remove_diacritics 2 tokenchars '_'"
      );
      CREATE TABLE search_hourly (
        hour  INTEGER NOT NULL,
        label TEXT NOT NULL,
        n     INTEGER NOT NULL,
        PRIMARY KEY (hour, label)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    name: "drafts, feed filters and activity aggregates",
    sql: `
      -- A draft is found by the sha256 of its token: the database never holds a usable link.
      CREATE TABLE drafts (
        token_hash  TEXT PRIMARY KEY,
        state       TEXT NOT NULL CHECK (state IN ('pending', 'published', 'discarded')),
        trail       TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        redactions  TEXT NOT NULL,
        risk        TEXT NOT NULL,
        author      TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        expires_at  INTEGER NOT NULL,
        trail_id    TEXT
      ) STRICT;
      CREATE INDEX drafts_by_expiry ON drafts (expires_at);

      ALTER TABLE trails ADD COLUMN runtime TEXT;
      ALTER TABLE trails ADD COLUMN tokens_spent REAL;
      CREATE INDEX trails_feed_by_category ON trails (category, reinforced_at DESC, seq DESC) WHERE status = 'indexed';
      CREATE INDEX trails_feed_by_runtime ON trails (runtime, reinforced_at DESC, seq DESC) WHERE status = 'indexed';
      CREATE INDEX outcomes_with_notes ON outcomes (trail_seq, at DESC) WHERE notes IS NOT NULL;

      -- Running totals, kept in the same transactions as the rows they count.
      CREATE TABLE counters (
        name  TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
      INSERT INTO counters (name, value) SELECT 'trails_indexed', count(*) FROM trails WHERE status = 'indexed';

      CREATE TABLE stats_hourly (
        hour         INTEGER PRIMARY KEY,
        outcomes     INTEGER NOT NULL DEFAULT 0,
        tokens_saved INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE TABLE agents_hourly (
        hour  INTEGER NOT NULL,
        agent TEXT NOT NULL,
        PRIMARY KEY (hour, agent)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 4,
    name: "lexical term statistics",
    sql: `
      -- Documents per term, kept with the FTS rows, so a query can skip terms that match nearly
      -- everything without asking FTS5 (whose vocabulary table counts by walking postings).
      CREATE TABLE lexical_terms (
        term TEXT PRIMARY KEY,
        docs INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
      -- Backfill from what is indexed already (a one-time walk of the postings).
      CREATE VIRTUAL TABLE temp.lexical_vocab_backfill USING fts5vocab(main, lexical, 'row');
      INSERT INTO lexical_terms (term, docs) SELECT term, doc FROM temp.lexical_vocab_backfill;
      DROP TABLE temp.lexical_vocab_backfill;
      INSERT INTO counters (name, value) SELECT 'lexical_docs', count(*) FROM lexical_docsize;
    `,
  },
  {
    version: 5,
    name: "agents by last activity",
    sql: `
      -- One row per agent with its latest activity: agents_24h is an index range count, exact
      -- over a rolling 24 hours, instead of de-duplicating hourly buckets.
      CREATE TABLE agent_activity (
        agent TEXT PRIMARY KEY,
        at    INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX agent_activity_by_time ON agent_activity (at);
      INSERT INTO agent_activity (agent, at)
        SELECT agent, max(hour) * 3600000 FROM agents_hourly GROUP BY agent;
      DROP TABLE agents_hourly;
    `,
  },
  {
    version: 6,
    name: "outcome reports keep the client address pseudonym",
    sql: `
      -- The keyed pseudonym of the reporting address (never the address): counted reports are
      -- limited per address per trail per UTC day, whatever agent ids it sends.
      ALTER TABLE outcomes ADD COLUMN client TEXT;
      CREATE INDEX outcomes_by_client ON outcomes (trail_seq, client, at) WHERE counted = 1;
    `,
  },
  {
    version: 7,
    name: "normalizer version and fingerprint aliases",
    sql: `
      -- The normalizer version each stored fingerprint was computed with (decisions §2): rows
      -- from before this column were computed with version 1.
      ALTER TABLE trails ADD COLUMN normalizer_version INTEGER NOT NULL DEFAULT 1;
      CREATE INDEX trails_by_normalizer_version ON trails (normalizer_version, seq);
      -- A fingerprint an older normalizer gave a stored trail, resolving to its current one for
      -- at least 90 days after the trail was re-fingerprinted.
      CREATE TABLE fingerprint_aliases (
        old_fp     TEXT NOT NULL,
        new_fp     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (old_fp, new_fp)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX fingerprint_aliases_by_time ON fingerprint_aliases (created_at);
    `,
  },
  {
    version: 8,
    name: "operator series and trail history",
    sql: `
      -- Hourly counts for the operator console's charts (searches, publishes, outcomes, verdicts,
      -- the queue's hourly peak), kept 30 days.
      CREATE TABLE series_hourly (
        hour  INTEGER NOT NULL,
        name  TEXT NOT NULL,
        value INTEGER NOT NULL,
        PRIMARY KEY (hour, name)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX events_by_trail ON events (trail_id, id) WHERE trail_id IS NOT NULL;
      -- What older rows can tell (the queue's peaks were never kept; removed trails are gone).
      INSERT INTO series_hourly (hour, name, value)
        SELECT at / 3600000, 'searches', count(*) FROM events WHERE kind = 'search' GROUP BY 1;
      INSERT INTO series_hourly (hour, name, value)
        SELECT created_at / 3600000, 'publishes', count(*) FROM trails GROUP BY 1;
      INSERT INTO series_hourly (hour, name, value)
        SELECT at / 3600000, 'outcomes', count(*) FROM outcomes GROUP BY 1;
      INSERT INTO series_hourly (hour, name, value)
        SELECT indexed_at / 3600000, status, count(*) FROM trails
        WHERE status IN ('indexed', 'merged', 'rejected') AND indexed_at IS NOT NULL GROUP BY 1, 2;
    `,
  },
  {
    version: 9,
    name: "ranking facts from an index",
    sql: `
      -- A search reads the status and strength of its ~50 candidates. From the table, each is a
      -- row of the whole trail, mostly not in the page cache at 100k trails (one read from disk or
      -- the OS cache each); this index holds just those columns in a few pages.
      CREATE INDEX trails_ranking ON trails (seq, status, strength);
    `,
  },
  {
    version: 10,
    name: "merge credits per client address",
    sql: `
      -- Who published a trail, as the address pseudonym of the publishing request (null on older
      -- rows), and the client each merge credit went to: one address earns at most one credit
      -- per trail per day, whatever agent ids it sends (older credits count as their agent's).
      ALTER TABLE trails ADD COLUMN client TEXT;
      ALTER TABLE merge_credits ADD COLUMN client TEXT NOT NULL DEFAULT '';
      UPDATE merge_credits SET client = agent;
      CREATE UNIQUE INDEX merge_credits_by_client ON merge_credits (trail_seq, client, day);
    `,
  },
  {
    version: 11,
    name: "search events by time",
    sql: `
      -- Search events are purged after two days (every search appends one): the purge finds the
      -- old ones through this index instead of reading the whole table.
      CREATE INDEX events_searches_by_time ON events (at) WHERE kind = 'search';
    `,
  },
  {
    version: 12,
    name: "uncounted reports per client address",
    sql: `
      -- An address's uncounted outcome reports of the day are counted before another is kept
      -- (src/core/outcome-counting.ts UNCOUNTED_KEPT_PER_CLIENT_PER_DAY).
      CREATE INDEX outcomes_uncounted_by_client ON outcomes (client, at) WHERE counted = 0;
    `,
  },
  {
    version: 13,
    name: "hot labels ranked by distinct clients",
    sql: `
      -- /v1/stats ranks the hot labels by how many different clients (address pseudonyms) searched
      -- each in the window, not by how often (src/core/hot-label.ts): one address's 100 labelled
      -- searches an hour put any token at the top. search_clients holds each label's clients with
      -- the hour of their latest search; search_hourly.clients counts, per hour, the clients whose
      -- latest search of the label fell in it, so the window's sum is its distinct clients and
      -- /v1/stats still reads one row per label and hour. prev_hour is the hour a client's latest
      -- search had before the one that moved it (the upsert reads it back to move the count).
      ALTER TABLE search_hourly ADD COLUMN clients INTEGER NOT NULL DEFAULT 0;
      -- Earlier counts did not record their clients: each label had at least one, counted at its
      -- latest hour (the fewest it can have had).
      UPDATE search_hourly SET clients = 1 WHERE (label, hour) IN (SELECT label, max(hour) FROM search_hourly GROUP BY label);
      CREATE TABLE search_clients (
        label     TEXT NOT NULL,
        client    TEXT NOT NULL,
        hour      INTEGER NOT NULL,
        prev_hour INTEGER,
        PRIMARY KEY (label, client)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX search_clients_by_hour ON search_clients (hour);
    `,
  },
  {
    version: 14,
    name: "content rules version",
    sql: `
      -- The content rules version (src/core/content-rules.ts) each trail's content was last redacted
      -- and screened with. Rows stored before read 0: the next start re-checks each of them once.
      ALTER TABLE trails ADD COLUMN content_rules_version INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX trails_by_content_rules_version ON trails (content_rules_version, seq);
    `,
  },
  {
    version: 15,
    name: "outcome notes content rules version",
    sql: `
      -- The content rules version each report's notes were last redacted and screened with. Rows
      -- stored before read 0: the next start re-checks each note once (reports without notes have
      -- nothing to check, and the index leaves them out).
      ALTER TABLE outcomes ADD COLUMN content_rules_version INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX outcomes_notes_by_content_rules_version ON outcomes (content_rules_version, id) WHERE notes IS NOT NULL;
    `,
  },
  {
    version: 16,
    name: "tombstones by merge key",
    sql: `
      -- The merge key of a removed trail that was indexed: its fix stays removed for the tombstone's
      -- 90 days, not only its exact content (a copy with one changed byte was indexed again). Rows
      -- stored before read NULL and match by content hash only, as they did.
      ALTER TABLE tombstones ADD COLUMN merge_key TEXT;
      CREATE INDEX tombstones_by_merge_key ON tombstones (merge_key) WHERE merge_key IS NOT NULL;
    `,
  },
];
