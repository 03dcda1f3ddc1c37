// One read of the change feeds shared by concurrent callers (the vector and fingerprint catch-ups).

/**
 * Runs `pull` for callers who must see every change committed before they called. Callers that
 * arrive while no pull runs share a new one; a caller that arrives while a pull runs waits for the
 * following one (shared with everyone else arriving meanwhile), since the running pull's snapshot
 * may predate what that caller was told. A failed pull rejects its callers only.
 */
export class SharedPull {
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  constructor(private readonly pull: () => Promise<void>) {}

  run(): Promise<void> {
    if (!this.running) {
      this.running = this.pull().finally(() => {
        this.running = null;
      });
      return this.running;
    }
    this.next ??= this.running
      .catch(() => {})
      .then(() => {
        this.next = null;
        return this.run();
      });
    return this.next;
  }
}
