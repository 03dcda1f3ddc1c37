// Drafts (interface.md 2.7, 3.2, 4.4–4.6; decisions §7): a redacted trail held for 30 minutes so
// that a person can read the exact payload and approve it. The draft id is the only credential:
// 192 random bits, kept in the database only as its sha256.
import { createHash, randomBytes } from "node:crypto";
import { prepareTrail } from "../core/prepare";
import { mergeCounts } from "../core/redaction";
import { assessRisk, type Risk } from "../core/risk";
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
 * The pending drafts' risk by the rules this process runs, by token hash. A draft's payload never
 * changes and neither do this process's rules, so it is assessed once per process: a GET is
 * unmetered beyond the general quota, and a draft of 30 hostile 2000-character commands (a 61 KB
 * body) takes 40-80 ms to assess, which every GET paid while it was assessed on each read.
 * Bounded by the JSON size of the verdicts held (a few KB for such a draft), oldest out first.
 */
export class DraftRiskMemo {
  private readonly risks = new Map<string, { risk: Risk; bytes: number }>();
  private bytes = 0;

  constructor(private readonly maxBytes = 4 * 1024 * 1024) {}

  riskOf(tokenHash: string, trail: DraftRecord["trail"]): Risk {
    const held = this.risks.get(tokenHash);
    if (held) return held.risk;
    const risk = assessRisk(trail);
    this.remember(tokenHash, risk);
    return risk;
  }

  /** A verdict this process has just made (a draft's creation). */
  remember(tokenHash: string, risk: Risk): void {
    this.forget(tokenHash);
    const bytes = JSON.stringify(risk).length + 200;
    if (bytes > this.maxBytes) return;
    while (this.bytes + bytes > this.maxBytes) {
      const oldest = this.risks.keys().next();
      if (oldest.done) break;
      this.forget(oldest.value);
    }
    this.risks.set(tokenHash, { risk, bytes });
    this.bytes += bytes;
  }

  /** The draft is no longer pending (published, discarded). */
  forget(tokenHash: string): void {
    const held = this.risks.get(tokenHash);
    if (!held) return;
    this.risks.delete(tokenHash);
    this.bytes -= held.bytes;
  }

  get size(): number {
    return this.risks.size;
  }
}

export class DraftService {
  private readonly risks = new DraftRiskMemo();

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
    const now = this.deps.now();
    const record: DraftRecord = {
      tokenHash: hashToken(token),
      state: "pending",
      trail: prepared.trail,
      fingerprint: prepared.fingerprint,
      redactions,
      risk: prepared.risk,
      author: caller.agent,
      createdAt: now,
      expiresAt: now + DRAFT_LIFETIME_S * 1000,
      trailId: null,
    };
    this.risks.remember(record.tokenHash, record.risk);
    try {
      await this.store.drafts.insert(record);
    } catch (err) {
      throw toServiceError(err) ?? new ServiceError("unavailable", "the draft could not be stored; retry with backoff");
    }
    return {
      body: {
        draft_id: token,
        approve_url: `${this.deps.publicUrl()}/approve.html#${token}`,
        expires_in: DRAFT_LIFETIME_S,
        fingerprint: record.fingerprint,
        redactions: record.redactions,
        risk: record.risk,
        trail: record.trail,
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
    const token = draftIdOf(rawToken);
    const d = await this.find(token);
    if (d.state === "pending") {
      return {
        draft_id: token,
        state: d.state,
        expires_in: Math.max(0, Math.ceil((d.expiresAt - this.deps.now()) / 1000)),
        fingerprint: d.fingerprint,
        redactions: d.redactions,
        // By the rules this process runs, not those of the draft's creation: a release with new
        // content rules may have started since (the stored verdict could be 30 minutes old), and
        // the person approving must read the flags the trail is indexed with.
        // Assessed once per draft per process (DraftRiskMemo): a GET costs no analysis after the first.
        risk: this.risks.riskOf(d.tokenHash, d.trail),
        trail: d.trail,
      };
    }
    if (d.state === "discarded") return { draft_id: token, state: d.state };
    return { draft_id: token, state: d.state, ...(await this.trailVerdict(d.trailId!)) };
  }

  private async trailVerdict(trailId: string): Promise<{ trail_id: string; trail_status: string; reasons?: string[] }> {
    const status = (await this.deps.trails.status(trailId)) as { status: string; reasons?: string[] };
    return status.status === "rejected"
      ? { trail_id: trailId, trail_status: status.status, reasons: status.reasons }
      : { trail_id: trailId, trail_status: status.status };
  }

  /** Approve: publishes once, however many approvals race (decisions §7). */
  async publish(rawToken: string, caller: Caller) {
    const token = draftIdOf(rawToken);
    const d = await this.find(token);
    if (d.state !== "pending") throw new ServiceError(d.state, `the draft is already ${d.state}`);
    const { trails } = this.deps;
    await this.deps.quotas.admit("publishDraft", caller.address);
    await trails.checkQueueRoom();
    const quota = await this.deps.quotas.take("publishDraft", caller.address);
    const record = await trails.storing(() =>
      this.store.transaction(async (tx) => {
        // The draft's author wrote it; the approval publishes it, from the approver's address.
        const inserted = await trails.insertQueued(tx, d.trail, caller, undefined, d.author);
        // In the same transaction as the trail: a second approval finds the draft published and
        // rolls its own insert back.
        if (!(await tx.drafts.markPublished(d.tokenHash, inserted.id))) throw finishedMeanwhile(await tx.drafts.byHash(d.tokenHash));
        return inserted;
      }),
    );
    this.risks.forget(d.tokenHash);
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
    this.risks.forget(d.tokenHash);
    return { draft_id: token, state: "discarded" as const };
  }

  purge(): Promise<number> {
    const now = this.deps.now();
    return this.store.drafts.purge(now, now - FINISHED_DRAFT_RETENTION_MS);
  }
}
