// Read-only views (interface.md 2.8–2.10, 4.10–4.12; decisions §9): the feed of recently
// reinforced trails, the activity list and the aggregate counters.
import type { FeedCursor, Store, TrailRecord } from "../store/ports";
import type { Static, TObject } from "@sinclair/typebox";
import { shownAgentId } from "../core/agent-id";
import { CATEGORIES, canonicalCategory, isCategory } from "../core/category";
import { HOT_LABEL_RULE, hotLabelOf } from "../core/hot-label";
import { runtimeSpellings } from "../core/overlap";
import { ActivityQuery, FeedQuery, parseQuery } from "../core/trail";
import { requireStore, ServiceError } from "./errors";

const DAY_MS = 24 * 3600 * 1000;
const REPLIES_PER_ITEM = 3;

export interface FeedParams {
  limit?: string | number;
  cursor?: string;
  category?: string;
  runtime?: string;
}

function query<T extends TObject>(schema: T, q: object): Static<T> {
  const parsed = parseQuery(schema, q as Record<string, unknown>);
  if (!parsed.ok) throw new ServiceError("invalid_request", "the query parameters are not valid", parsed.details);
  return parsed.value;
}

/** Opaque to clients; a keyset position, so pages never repeat or skip as new trails arrive. */
export const encodeCursor = (c: FeedCursor) => Buffer.from(JSON.stringify([c.reinforcedAt, c.seq])).toString("base64url");

export function decodeCursor(raw: string): FeedCursor {
  try {
    if (raw.length > 100) throw new Error();
    const [reinforcedAt, seq] = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
    if (!Number.isSafeInteger(reinforcedAt) || !Number.isSafeInteger(seq)) throw new Error();
    return { reinforcedAt, seq };
  } catch {
    throw new ServiceError("invalid_request", "cursor is not one this colony gave out", [{ path: "/cursor", message: "unknown cursor" }]);
  }
}

/** How many hot labels /v1/stats shows (decisions §9), and how many more it reads to fill the places of labels it leaves out. */
const HOT_SHOWN = 10;
const HOT_SPARE = 10;

export class FeedService {
  constructor(private readonly deps: { store: Store | null; now: () => number }) {}

  private get store(): Store {
    return requireStore(this.deps.store);
  }

  async feed(q: FeedParams) {
    const { limit = 20, cursor, category, runtime } = query(FeedQuery, q);
    const wanted = category === undefined ? undefined : canonicalCategory(category);
    // The categories are a fixed set: a typo or a look-alike letter (`dеpendency` with a Cyrillic
    // е) found nothing, an empty feed without a word, where an unknown outcome or os is 400.
    if (wanted !== undefined && !isCategory(wanted)) {
      throw new ServiceError("invalid_request", "the query parameters are not valid", [
        { path: "/category", message: `is not a category; one of ${CATEGORIES.join(", ")}` },
      ]);
    }
    const after = cursor ? decodeCursor(cursor) : undefined;
    const store = this.store;
    // One extra row tells whether another page exists.
    // Every stored spelling of the runtime asked for (nodejs, Node.js, node): one runtime, as in search
    const runtimes = runtime === undefined ? undefined : runtimeSpellings(runtime);
    const rows = await store.trails.feed({
      limit: limit + 1,
      after,
      category: wanted,
      runtimes,
    });
    const page = rows.slice(0, limit);
    const replies = new Map<number, { outcome: string; notes: string | null; agent: string; at: string }[]>();
    for (const r of await store.outcomes.latestWithNotes(
      page.map((t) => t.seq),
      REPLIES_PER_ITEM,
    )) {
      const list = replies.get(r.trailSeq) ?? [];
      list.push({ outcome: r.outcome, notes: r.notes, agent: shownAgentId(r.agent), at: new Date(r.at).toISOString() });
      replies.set(r.trailSeq, list);
    }
    const last = page[page.length - 1];
    return {
      items: page.map((t) => this.item(t, replies.get(t.seq) ?? [])),
      next_cursor: rows.length > limit && last ? encodeCursor({ reinforcedAt: last.reinforcedAt!, seq: last.seq }) : null,
    };
  }

  private item(t: TrailRecord, replies: unknown[]) {
    return {
      trail_id: t.id,
      category: t.category,
      quality: t.quality,
      risk: t.risk,
      strength: t.strength,
      outcomes: t.counts,
      reinforced_at: new Date(t.reinforcedAt!).toISOString(),
      trail: t.trail,
      replies,
    };
  }

  async activity(q: { limit?: string | number }) {
    const { limit = 20 } = query(ActivityQuery, q);
    return {
      events: (await this.store.events.recent(limit)).map((e) => ({
        kind: e.kind,
        agent: shownAgentId(e.agent),
        trail_id: e.trailId,
        text: e.text,
        at: new Date(e.at).toISOString(),
      })),
    };
  }

  async stats() {
    const store = this.store;
    const since = this.deps.now() - DAY_MS;
    const day = await store.stats.since(since);
    return {
      trails: await store.stats.trailsIndexed(),
      outcomes_24h: day.outcomes,
      tokens_saved_24h: day.tokensSaved,
      agents_24h: day.agents,
      // Ranked by clients, then searches (docs/security.md); `clients` is an additive field.
      // A label counted before the current rule (hotLabelOf) would refuse it is not shown, and the
      // next one takes its place: the store is asked for more than are shown.
      hot: (await store.searches.top(since, HOT_SHOWN + HOT_SPARE, HOT_LABEL_RULE))
        .filter((h) => hotLabelOf(h.label) !== null)
        .slice(0, HOT_SHOWN)
        .map((h) => ({
          label: h.label,
          searches: Math.min(h.searches, Number.MAX_SAFE_INTEGER),
          clients: h.clients,
        })),
    };
  }
}
