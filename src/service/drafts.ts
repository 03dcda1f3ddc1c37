// Drafts (interface.md 2.7, 3.2, 4.4–4.6; decisions §7): a redacted trail held for 30 minutes so
// that a person can read the exact payload and approve it. The draft id is the only credential:
// 192 random bits, kept in the database only as its sha256.
import { createHash, randomBytes } from "node:crypto";
import { canonicalJson } from "../core/enrichment";
import { fingerprint } from "../core/fingerprint";
import { ifMatchHolds } from "../core/entity-tags";
import { prepareTrail } from "../core/prepare";
import { mergeCounts, placeholderCounts, type RedactionCounts, redactTrail } from "../core/redaction";
import { cutSensitiveContent } from "../core/rejection";
import { assessRisk, type Risk } from "../core/risk";
import type { Trail } from "../core/trail";
import type { DraftRecord, Store } from "../store/ports";
import { requireStore, ServiceError, toServiceError, type Caller } from "./errors";
import type { Quotas } from "./quotas";
import type { TrailService } from "./trails";

export const DRAFT_LIFETIME_S = 1800;
/** Published and discarded drafts stay readable this long (for the page and publish status). */
export const FINISHED_DRAFT_RETENTION_MS = 7 * 24 * 3600 * 1000;
export const DRAFT_ID_PATTERN = /^[A-Za-z0-9_-]{32}$/;

export interface DraftDeps {
  store: Store | null;
  trails: TrailService;
  now: () => number;
  publicUrl: () => string;
  quotas: Quotas;
}

/**
 * Why a draft read pending could not be marked: another request published or discarded it
 * meanwhile (409 naming its state), or it expired and maintenance purged it (404, as it would have
 * been a moment later; it was reported as published or in_progress).
 */
function finishedMeanwhile(now: DraftRecord | null): ServiceError {
  if (!now) return notFound();
  return now.state === "pending"
    ? new ServiceError("in_progress", "the draft is being published")
    : new ServiceError(now.state, `the draft is already ${now.state}`);
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");
/** A draft id as a client sent it, trimmed as every string is (an MCP tool's id arrives trimmed: one rule for both doors). */
const draftIdOf = (raw: string) => (typeof raw === "string" ? raw.trim() : raw);
const notFound = () => new ServiceError("not_found", "no draft with this id (unknown or expired)");

/**
 * A pending draft as the content rules this process runs make it: what the approval page shows and
 * what Publish stores. A release with new rules may have started since the draft was made (its
 * payload was redacted, its risk assessed, up to 30 minutes before): the stored trail goes through
 * this release's redaction and cut again, and its risk is assessed again, so the person reads the
 * payload and the flags the trail is published and indexed with (enrichment's second pass then finds
 * nothing more to change). `tag` names this view (the answer's ETag): Publish with `If-Match` is
 * refused when the view it names is not the one the colony would publish now.
 */
export interface DraftView {
  trail: Trail;
  redactions: RedactionCounts;
  risk: Risk;
  fingerprint: string;
  tag: string;
}

/** The view of a stored draft by the rules this process runs; the same in every process running them. */
export function viewOfDraft(d: Pick<DraftRecord, "trail" | "redactions">): DraftView {
  const { value: redacted, counts } = redactTrail(d.trail);
  const { trail } = cutSensitiveContent(redacted);
  const redactions = mergeCounts({ ...d.redactions }, counts);
  // A field cut before holds the placeholder already, and cutting it again changes nothing: only
  // the fields this release's rules cut are new.
  const newlyCut = (placeholderCounts(trail).sensitive_content ?? 0) - (placeholderCounts(redacted).sensitive_content ?? 0);
  if (newlyCut > 0) mergeCounts(redactions, { sensitive_content: newlyCut });
  const risk = assessRisk(trail);
  return { trail, redactions, risk, fingerprint: fingerprint(trail.problem.error), tag: draftViewTag({ trail, redactions, risk }) };
}

/**
 * The tag of what a person is shown: the payload, the redaction counts and the risk flags, in
 * canonical JSON (keys sorted), so that every process gives one view one tag, whatever order its
 * objects were built or read back in.
 */
export function draftViewTag(view: Pick<DraftView, "trail" | "redactions" | "risk">): string {
  const { trail, redactions, risk } = view;
  return createHash("sha256").update(canonicalJson({ trail, redactions, risk })).digest("hex").slice(0, 32);
}

/**
 * The pending drafts' views by the rules this process runs, by token hash. A draft's payload never
 * changes and neither do this process's rules, so it is made once per process: a GET is unmetered
 * beyond the general quota, and a draft of 30 hostile 2000-character commands (a 61 KB body) takes
 * 40-80 ms to assess, which every GET paid while it was assessed on each read.
 * Bounded by the JSON size of the views held, oldest out first.
 */
export class DraftViewMemo {
  private readonly views = new Map<string, { view: DraftView; bytes: number }>();
  private bytes = 0;

  constructor(private readonly maxBytes = 8 * 1024 * 1024) {}

  viewOf(tokenHash: string, draft: Pick<DraftRecord, "trail" | "redactions">): DraftView {
    const held = this.views.get(tokenHash);
    if (held) return held.view;
    const view = viewOfDraft(draft);
    this.remember(tokenHash, view);
    return view;
  }

  private remember(tokenHash: string, view: DraftView): void {
    const bytes = JSON.stringify(view).length + 200;
    if (bytes > this.maxBytes) return;
    while (this.bytes + bytes > this.maxBytes) {
      const oldest = this.views.keys().next();
      if (oldest.done) break;
      this.forget(oldest.value);
    }
    this.views.set(tokenHash, { view, bytes });
    this.bytes += bytes;
  }

  /** The draft is no longer pending (published, discarded). */
  forget(tokenHash: string): void {
    const held = this.views.get(tokenHash);
    if (!held) return;
    this.views.delete(tokenHash);
    this.bytes -= held.bytes;
  }

  get size(): number {
    return this.views.size;
  }
}

export class DraftService {
  private readonly views = new DraftViewMemo();

  constructor(private readonly deps: DraftDeps) {}

  private get store(): Store {
    return requireStore(this.deps.store);
  }

  async create(input: unknown, caller: Caller) {
    await this.deps.quotas.admit("createDraft", caller.address);
    const parsed = prepareTrail(input);
    if (!parsed.ok) throw new ServiceError("invalid_trail", "the trail does not validate", parsed.details);
    const prepared = parsed.value;
    // The person approving is told everything removed from the payload: what this pass redacted
    // and what arrived already redacted (MCP servers redact before they send).
    const redactions = mergeCounts({ ...prepared.arrivedRedacted }, prepared.redactions);
    const taken = await this.deps.quotas.take("createDraft", caller.address);
    const token = randomBytes(24).toString("base64url");
    const tokenHash = hashToken(token);
    // The view every later read gives (the same function of the stored draft), made once here.
    const view = this.views.viewOf(tokenHash, { trail: prepared.trail, redactions });
    const now = this.deps.now();
    const record: DraftRecord = {
      tokenHash,
      state: "pending",
      trail: prepared.trail,
      fingerprint: prepared.fingerprint,
      redactions,
      risk: view.risk,
      author: caller.agent,
      createdAt: now,
      expiresAt: now + DRAFT_LIFETIME_S * 1000,
      trailId: null,
    };
    try {
      await this.store.drafts.insert(record);
    } catch (err) {
      this.views.forget(record.tokenHash);
      throw toServiceError(err) ?? new ServiceError("unavailable", "the draft could not be stored; retry with backoff");
    }
    return {
      body: {
        draft_id: token,
        approve_url: `${this.deps.publicUrl()}/approve.html#${token}`,
        expires_in: DRAFT_LIFETIME_S,
        fingerprint: view.fingerprint,
        redactions: view.redactions,
        risk: view.risk,
        trail: view.trail,
      },
      quota: taken,
    };
  }

  /** The draft behind a token, or 404 for an unknown, malformed or expired one. */
  private async find(token: string): Promise<DraftRecord> {
    // A malformed id is looked up too (it cannot match: a stored hash never comes from one), so
    // every 404 costs the same store round trip, which is measurable on a networked database.
    const wellFormed = typeof token === "string" && DRAFT_ID_PATTERN.test(token);
    const draft = await this.store.drafts.byHash(hashToken(wellFormed ? token : "-"));
    if (!draft || !wellFormed) throw notFound();
    if (draft.state === "pending" && draft.expiresAt <= this.deps.now()) throw notFound();
    return draft;
  }

  async get(rawToken: string): Promise<Record<string, unknown>> {
    return (await this.read(rawToken)).body;
  }

  /** The draft's state, and for a pending one the tag of the view shown (GET's ETag). */
  async read(rawToken: string): Promise<{ body: Record<string, unknown>; tag: string | null }> {
    const token = draftIdOf(rawToken);
    const d = await this.find(token);
    if (d.state === "pending") {
      // By the rules this process runs, not those of the draft's creation (DraftView): a release
      // with new content rules may have started since, and the person approving must read the
      // payload and the flags the trail is published and indexed with. Made once per draft per
      // process (DraftViewMemo): a GET costs no analysis after the first.
      const view = this.views.viewOf(d.tokenHash, d);
      return {
        body: {
          draft_id: token,
          state: d.state,
          expires_in: Math.max(0, Math.ceil((d.expiresAt - this.deps.now()) / 1000)),
          fingerprint: view.fingerprint,
          redactions: view.redactions,
          risk: view.risk,
          trail: view.trail,
        },
        tag: view.tag,
      };
    }
    if (d.state === "discarded") return { body: { draft_id: token, state: d.state }, tag: null };
    return { body: { draft_id: token, state: d.state, ...(await this.trailVerdict(d.trailId!)) }, tag: null };
  }

  private async trailVerdict(trailId: string): Promise<{ trail_id: string; trail_status: string; reasons?: string[] }> {
    const status = (await this.deps.trails.status(trailId)) as { status: string; reasons?: string[] };
    return status.status === "rejected"
      ? { trail_id: trailId, trail_status: status.status, reasons: status.reasons }
      : { trail_id: trailId, trail_status: status.status };
  }

  /**
   * Approve: publishes once, however many approvals race (decisions §7), the payload as the rules
   * running now make it (DraftView). `ifMatch` (the If-Match header: the approval page sends the
   * ETag of the view it showed) must name that view: one shown by a release with other content
   * rules (a page open across an upgrade) is refused as draft_changed, nothing published.
   */
  async publish(rawToken: string, caller: Caller, ifMatch: string | null = null) {
    const token = draftIdOf(rawToken);
    const d = await this.find(token);
    if (d.state !== "pending") throw new ServiceError(d.state, `the draft is already ${d.state}`);
    const view = this.views.viewOf(d.tokenHash, d);
    const holds = ifMatch === null ? true : ifMatchHolds(ifMatch, `"${view.tag}"`);
    if (holds === null) {
      throw new ServiceError(
        "invalid_request",
        'If-Match must be the ETag of the draft as shown ("…", from GET /v1/drafts/{draft_id}), a list of such tags, or *; leave it out to publish the draft as it reads now',
      );
    }
    if (!holds) {
      throw new ServiceError(
        "draft_changed",
        "the colony's content rules changed since this draft was shown: its payload or risk flags read differently now; read it again (GET) and approve what it shows",
      );
    }
    const { trails } = this.deps;
    await this.deps.quotas.admit("publishDraft", caller.address);
    await trails.checkQueueRoom();
    const quota = await this.deps.quotas.take("publishDraft", caller.address);
    const record = await trails.storing(() =>
      this.store.transaction(async (tx) => {
        // The draft's author wrote it; the approval publishes it, from the approver's address.
        const inserted = await trails.insertQueued(tx, view.trail, caller, view.fingerprint, d.author);
        // In the same transaction as the trail: a second approval finds the draft published and
        // rolls its own insert back.
        if (!(await tx.drafts.markPublished(d.tokenHash, inserted.id))) throw finishedMeanwhile(await tx.drafts.byHash(d.tokenHash));
        return inserted;
      }),
    );
    this.views.forget(d.tokenHash);
    return {
      body: {
        draft_id: token,
        state: "published" as const,
        trail_id: record.id,
        trail_status: record.status,
        status_url: `/v1/trails/${record.id}`,
      },
      quota,
    };
  }

  async discard(rawToken: string) {
    const token = draftIdOf(rawToken);
    const d = await this.find(token);
    if (d.state !== "pending") throw new ServiceError(d.state, `the draft is already ${d.state}`);
    if (!(await this.store.drafts.markDiscarded(d.tokenHash))) throw finishedMeanwhile(await this.store.drafts.byHash(d.tokenHash));
    this.views.forget(d.tokenHash);
    return { draft_id: token, state: "discarded" as const };
  }

  purge(): Promise<number> {
    const now = this.deps.now();
    return this.store.drafts.purge(now, now - FINISHED_DRAFT_RETENTION_MS);
  }
}
