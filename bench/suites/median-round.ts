/** The lower median of `xs`: the middle one of an odd count, the lower middle of an even one. */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]!;
}

/**
 * Of several rounds of one step, the one with the median throughput (the lower one of an even
 * count): its own latencies and cores stay together, where medians taken column by column would
 * mix rounds.
 */
export function medianRound<T extends { inferPerS: number }>(rounds: readonly T[]): T {
  return [...rounds].sort((a, b) => a.inferPerS - b.inferPerS)[(rounds.length - 1) >> 1]!;
}
