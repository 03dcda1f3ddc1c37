// The fingerprint change feed (../seams.ts FingerprintChanges) across replicas: a change is
// announced after its commit, delivered at once to this replica's listeners and sent to the other
// replicas by NOTIFY. A replica whose LISTEN connection was cut may have missed changes: on every
// (re)connect its listeners are told everything may have changed (they drop their caches).
import type { SQL } from "bun";
import { randomUUID } from "node:crypto";
import type { FingerprintChanges } from "../seams";

export const FINGERPRINTS_CHANNEL = "colony_fingerprints";
/** Fingerprints per NOTIFY: well under PostgreSQL's 8,000-byte payload limit. */
const PER_NOTICE = 64;

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

  constructor(private readonly sql: SQL) {}

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
