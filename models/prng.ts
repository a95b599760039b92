/**
 * Seeded pseudo-random numbers, so generated weights are byte-identical on
 * every build and machine (Math.random is neither seedable nor portable).
 */

/** A generator returning floats uniform in [0, 1). */
export type Random = () => number;

/**
 * mulberry32: a tiny 32-bit PRNG, good enough for weight init. Uses only
 * integer ops and one exact division, so results are the same everywhere.
 */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Float32Array of `length` values uniform in [-limit, limit]. */
export function uniform(random: Random, length: number, limit: number): Float32Array {
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = (random() * 2 - 1) * limit;
  return out;
}

/**
 * He (Kaiming) uniform limit, sqrt(6 / fanIn) times `gain`: keeps the
 * variance of ReLU activations roughly constant from layer to layer.
 */
export function heLimit(fanIn: number, gain = 1): number {
  return gain * Math.sqrt(6 / fanIn);
}
