// The fingerprint change feed (../seams.ts FingerprintChanges) across replicas: a change is
// announced after its commit, delivered at once to this replica's listeners and sent to the other
// replicas by NOTIFY. A replica whose LISTEN connection was cut may have missed changes: on every
// (re)connect its listeners are told everything may have changed (they drop their caches).
//
// A notice arrives milliseconds after the commit; a client that was just told `indexed` by one
// replica may ask another sooner. So before a cached answer is given, catchUp reads the
// fingerprints that triggers wrote to fingerprint_changes (migration 4) in transactions not yet
// finished when this replica last looked, exactly as the vector feed does (postgres/vectors.ts):
// one query, usually returning no row.
import type { SQL } from "bun";
import { randomUUID } from "node:crypto";
import type { FingerprintChanges } from "../seams";
import { bounded, type Patience } from "./failures";
import { SharedPull } from "./shared-pull";

export const FINGERPRINTS_CHANNEL = "colony_fingerprints";
/** Fingerprints per NOTIFY: well under PostgreSQL's 8,000-byte payload limit. */
const PER_NOTICE = 64;
/** fingerprint_changes rows are kept this long (migration 4 says an hour)... */
const KEPT_MS = 3600_000;
/** ...so a replica that has not looked for half of it cannot trust its horizon: it drops everything. */
const HORIZON_TRUSTED_MS = KEPT_MS / 2;
/** How often a replica deletes rows older than KEPT_MS while catching up. */
const PURGE_EVERY_MS = 600_000;

interface Subscriber {
  listener: (change: { fingerprints: string[] }) => void;
  lost?: () => void;
}

export class PgFingerprintFeed implements FingerprintChanges {
  /** Names this replica in its notices, so it does not deliver its own changes twice. */
  private readonly origin = randomUUID();
  private readonly subscribers = new Set<Subscriber>();
  private listening: Promise<{ unlisten(): Promise<void> } | null> | null = null;
  private closed = false;
  /** Transactions from this id on may have written changes this replica has not read; null: never looked. */
  private horizon: string | null = null;
  private lookedAt = 0;
  private purgedAt = 0;
  private readonly pulls = new SharedPull(() => this.pull());

  constructor(
    private readonly sql: SQL,
    /** Bounds catchUp: a server that stopped answering must not hold the lookups waiting on it. */
    private readonly patience?: Patience,
  ) {}

  async announce(change: { fingerprints: string[] }): Promise<void> {
    for (const s of this.subscribers) s.listener(change);
    for (let i = 0; i < change.fingerprints.length; i += PER_NOTICE) {
      const payload = JSON.stringify({ origin: this.origin, fingerprints: change.fingerprints.slice(i, i + PER_NOTICE) });
      // A notice that cannot be sent (database away) is a notice the others miss; their LISTEN
      // connection is cut as well then, and its reconnect tells them to drop everything.
      await this.sql`SELECT pg_notify(${FINGERPRINTS_CHANNEL}, ${payload})`.catch(() => {});
    }
  }

  subscribe(listener: Subscriber["listener"], lost?: () => void): () => void {
    const subscriber = { listener, lost };
    this.subscribers.add(subscriber);
    this.listen();
    return () => void this.subscribers.delete(subscriber);
  }

  /**
   * Resolves once every change committed (on any replica) before the call has reached this
   * replica's listeners. Concurrent callers share a read; one that arrives while a read runs
   * waits for the following one, since the running read's snapshot may predate what the caller
   * was told. Rejects when the database does not answer, or not within the patience's bound.
   */
  catchUp(): Promise<void> {
    return bounded(this.pulls.run(), { patience: this.patience });
  }

  private async pull(): Promise<void> {
    const now = performance.now();
    const trusted = this.horizon !== null && now - this.lookedAt < HORIZON_TRUSTED_MS;
    const rows: [string | null, string | null][] = await this.sql`
      SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon, NULL::text AS fingerprint
      UNION ALL SELECT NULL, fingerprint FROM fingerprint_changes
        WHERE ${trusted} AND txid >= ${this.horizon ?? "0"}::xid8`.values();
    this.lookedAt = now;
    let horizon = this.horizon;
    const fingerprints = new Set<string>();
    for (const [h, fp] of rows) {
      if (h !== null) horizon = h;
      else if (fp !== null) fingerprints.add(fp);
    }
    this.horizon = horizon;
    if (!trusted) {
      for (const s of this.subscribers) s.lost?.();
    } else if (fingerprints.size > 0) {
      const change = { fingerprints: [...fingerprints] };
      for (const s of this.subscribers) s.listener(change);
    }
    if (now - this.purgedAt > PURGE_EVERY_MS) {
      this.purgedAt = now;
      void this.sql`DELETE FROM fingerprint_changes WHERE at < now() - ${`${KEPT_MS} milliseconds`}::interval`.catch(() => {});
    }
  }

  private listen(): void {
    if (this.listening || this.closed) return;
    this.listening = this.sql
      .listen(
        FINGERPRINTS_CHANNEL,
        (payload: string) => this.received(payload),
        // Runs on the first LISTEN and after every reconnect: changes may have been missed meanwhile.
        () => {
          for (const s of this.subscribers) s.lost?.();
        },
      )
      .catch(() => {
        this.listening = null; // tried again at the next subscribe
        return null;
      });
  }

  private received(payload: string): void {
    let notice: { origin?: unknown; fingerprints?: unknown };
    try {
      notice = JSON.parse(payload);
    } catch {
      return;
    }
    if (notice.origin === this.origin || !Array.isArray(notice.fingerprints)) return;
    const fingerprints = notice.fingerprints.filter((f): f is string => typeof f === "string");
    for (const s of this.subscribers) s.listener({ fingerprints });
  }

  async close(): Promise<void> {
    this.closed = true;
    const handle = await this.listening;
    await handle?.unlisten().catch(() => {});
  }
}
