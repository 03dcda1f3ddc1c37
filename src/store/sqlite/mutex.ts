// A first-come, first-served lock for asynchronous code. bun:sqlite runs statements synchronously
// on one connection, so a transaction that awaits (for the caller's own async work) must keep every
// other writer out until it commits, or their statements would land inside its BEGIN…COMMIT.

export class AsyncMutex {
  private held = false;
  private readonly waiting: (() => void)[] = [];

  /** Runs `fn` while holding the lock; an uncontended lock is taken without yielding. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.held = true;
    try {
      return await fn();
    } finally {
      // Hand the lock straight to the next waiter, so nobody can slip in between.
      const next = this.waiting.shift();
      if (next) next();
      else this.held = false;
    }
  }

  get locked(): boolean {
    return this.held;
  }
}
