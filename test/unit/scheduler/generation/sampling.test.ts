import { describe, expect, it } from "vitest";
import { GREEDY } from "../../../../runtime/core/mod.ts";
import { sample, seededRandom } from "../../../../runtime/scheduler/generation/sampling.ts";

const logits = Float32Array.from([1, 3, 2, 0.5, 2.9]);
const empty = { output: new Map<number, number>(), prompt: new Set<number>() };
const draws = (params: Partial<typeof GREEDY>, count = 2000, seed = 1) => {
  const random = seededRandom(seed);
  const seen = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const { token } = sample(logits, { ...GREEDY, ...params }, empty, random);
    seen.set(token, (seen.get(token) ?? 0) + 1);
  }
  return seen;
};

describe("sample", () => {
  it("greedy takes the largest logit; logprobs are the raw distribution's, with the top alternatives", () => {
    const chosen = sample(logits, { ...GREEDY, topLogprobs: 2 }, empty, seededRandom(1));
    const logSum = Math.log([...logits].reduce((s, v) => s + Math.exp(v), 0));
    expect(chosen.token).toBe(1);
    expect(chosen.logprob).toBeCloseTo(3 - logSum, 6);
    expect(chosen.top).toEqual({ tokens: [1, 4], logprobs: [expect.closeTo(3 - logSum, 6), expect.closeTo(2.9 - logSum, 6)] });
  });

  it("logit_bias and penalties move the choice; stop tokens can be suppressed", () => {
    expect(sample(logits, { ...GREEDY, logitBias: new Map([[3, 5]]) }, empty, seededRandom(1)).token).toBe(3);
    // Token 1 was generated twice: a frequency penalty of 0.1 per occurrence leaves 2.8 < 2.9.
    expect(sample(logits, { ...GREEDY, frequencyPenalty: 0.1 }, { output: new Map([[1, 2]]), prompt: new Set() }, seededRandom(1)).token).toBe(4);
    expect(sample(logits, { ...GREEDY, presencePenalty: 0.2 }, { output: new Map([[1, 1]]), prompt: new Set() }, seededRandom(1)).token).toBe(4);
    // Repetition penalty divides a positive logit: 3 / 1.2 = 2.5 < 2.9.
    expect(sample(logits, { ...GREEDY, repetitionPenalty: 1.2 }, { output: new Map(), prompt: new Set([1]) }, seededRandom(1)).token).toBe(4);
    expect(sample(logits, GREEDY, empty, seededRandom(1), [1]).token).toBe(4);
  });

  it("top-k, top-p and min-p keep only the likely tokens; the same seed draws the same tokens", () => {
    expect([...draws({ temperature: 1, topK: 2 }).keys()].sort()).toEqual([1, 4]);
    // p(1) ≈ 0.40, p(4) ≈ 0.36: top_p 0.5 keeps those two.
    expect([...draws({ temperature: 1, topP: 0.5 }).keys()].sort()).toEqual([1, 4]);
    // min_p 0.5: tokens at least half as likely as the best (1, 4, and 2 at e^-1 ≈ 0.37 of it is out).
    expect([...draws({ temperature: 1, minP: 0.5 }).keys()].sort()).toEqual([1, 4]);
    expect(draws({ temperature: 1 }, 50, 9)).toEqual(draws({ temperature: 1 }, 50, 9));
    // Temperature 1 over all five: the draw frequencies follow the softmax within a few percent.
    const all = draws({ temperature: 1 }, 20000);
    const total = [...logits].reduce((s, v) => s + Math.exp(v), 0);
    for (let t = 0; t < 5; t++) expect((all.get(t) ?? 0) / 20000).toBeCloseTo(Math.exp(logits[t]!) / total, 1);
  });
});
