/** One alternation of the observability benchmark: both servers measured, in the order given. */
export interface ObservabilityRound {
  order: ("off" | "on")[];
  off: number;
  on: number;
}

export interface ObservabilitySummary {
  /** on ÷ off of each round. */
  ratios: number[];
  mean: number;
  min: number;
  max: number;
  stdev: number;
  /** "met" / "missed" only when every round agrees; otherwise the spread hides the answer. */
  verdict: "met" | "missed" | "within noise";
  sentence: string;
}

/**
 * Summarises rounds against `target` (on ≥ target × off). A verdict is claimed only outside the
 * noise: met when even the worst round's ratio reaches the target, missed when even the best
 * round's falls short; anything between says the spread is too wide to tell.
 */
export function summariseObservability(rounds: ObservabilityRound[], target: number): ObservabilitySummary {
  const ratios = rounds.map((r) => r.on / r.off);
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  const stdev = Math.sqrt(ratios.reduce((n, r) => n + (r - mean) ** 2, 0) / Math.max(1, ratios.length - 1));
  const min = Math.min(...ratios);
  const max = Math.max(...ratios);
  const verdict = min >= target ? "met" : max < target ? "missed" : "within noise";
  const f = (v: number) => v.toFixed(3);
  const spread = `mean ${f(mean)}, range ${f(min)}–${f(max)}, stdev ${f(stdev)} over ${ratios.length} rounds`;
  const sentence =
    verdict === "met"
      ? `On ÷ off per round: ${spread}. Every round reached the target ≥ ${target}: **met**.`
      : verdict === "missed"
        ? `On ÷ off per round: ${spread}. No round reached the target ≥ ${target}: **missed**.`
        : `On ÷ off per round: ${spread}. The rounds fall on both sides of the target ≥ ${target}, so this run cannot tell whether it is met: the cost is within the noise of this machine.`;
  return { ratios, mean, min, max, stdev, verdict, sentence };
}
