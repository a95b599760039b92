/**
 * mulberry32: a tiny seeded 32-bit PRNG, uniform in [0, 1) — the same numbers on every runtime,
 * so a seeded generation or a seeded load gives the same results everywhere (Math.random cannot be seeded).
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
