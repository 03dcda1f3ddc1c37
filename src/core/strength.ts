// Trail strength (decisions §6): the posterior mean of a Beta distribution over "this fix works",
// whose prior comes from the enrichment quality. Pure. The formula is in docs/ranking-and-strength.md.
//
//   α = 1 + K·q + worked + ½·partially_worked
//   β = 1 + K·(1 − q) + failed
//   strength = α / (α + β)
//
// K = 4: the quality judgement weighs as much as four outcome reports, so it sets the starting
// point (1/6 for q = 0, 1/2 for q = 0.5, 5/6 for q = 1) and real reports outweigh it after a few.
// A partial success is half a success and no failure: it always raises strength, by less than a
// full success (adding ½ to β as well would lower a strong trail on a partial success).

export interface OutcomeCounts {
  worked: number;
  partially_worked: number;
  failed: number;
}

/** Weight of the quality prior, in outcome reports. */
export const PRIOR_WEIGHT = 4;
/** How much of a success a partially_worked report counts as. */
export const PARTIAL_CREDIT = 0.5;
/** Quality assumed when none is known (or it is not a finite number). */
export const DEFAULT_QUALITY = 0.5;

const count = (n: number) => (Number.isFinite(n) && n > 0 ? n : 0);
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** The Beta parameters behind strength, for documentation and debugging. */
export function strengthPosterior(counts: OutcomeCounts, quality: number): { alpha: number; beta: number } {
  const q = Number.isFinite(quality) ? clamp01(quality) : DEFAULT_QUALITY;
  return {
    alpha: 1 + PRIOR_WEIGHT * q + count(counts.worked) + PARTIAL_CREDIT * count(counts.partially_worked),
    beta: 1 + PRIOR_WEIGHT * (1 - q) + count(counts.failed),
  };
}

/** Strength in 0..1: the Beta posterior mean α / (α + β). */
export function strength(counts: OutcomeCounts, quality: number): number {
  const { alpha, beta } = strengthPosterior(counts, quality);
  return clamp01(alpha / (alpha + beta));
}
