// A small seeded PRNG (mulberry32) for reproducible harnesses: the same seed replays the same
// workload, kill moments and fuzz inputs.
import { mulberry32 } from "../../tools/prng";

export class Prng {
  /** Uniform in [0, 1). */
  readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A new generator derived from this one (for concurrent clients with their own streams). */
  fork(): Prng {
    return new Prng(Math.floor(this.next() * 2 ** 32));
  }
}
