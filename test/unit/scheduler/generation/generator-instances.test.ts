import { describe, expect, it } from "vitest";
import { GREEDY, systemClock } from "../../../../runtime/core/mod.ts";
import { GeneratorInstances } from "../../../../runtime/scheduler/generation/generator-instances.ts";
import type { ScheduledRequest } from "../../../../runtime/scheduler/mod.ts";
import { decoderVocabSize } from "../../../../models/decoder.ts";
import { DECODER_GEOMETRY, decoderInstance, referenceGreedy } from "../../../../harness/decoder-instance.ts";

// Two instances of the example decoder behind one generator: each runs a loop over a KV cache of
// its own, and requests go to the less loaded one.
function generator(count: number) {
  const instances = Array.from({ length: count }, () => decoderInstance());
  const g = new GeneratorInstances(
    {
      name: "tiny_gpt", geometry: DECODER_GEOMETRY, clock: systemClock, mode: "continuous", blockSize: 4, blocks: 64, maxNumSeqs: 8, maxBatchedTokens: 64,
      maxModelLen: 256, maxWaiting: 64, maxWaitingTokens: 1 << 20, prefixCaching: true, vocab: decoderVocabSize(), eosTokenIds: [], samplingDefaults: GREEDY,
    },
    instances,
  );
  return { g, instances };
}

const request = (prompt: number[], maxTokens: number): ScheduledRequest => ({
  feeds: { input_ids: { datatype: "INT64", shape: [prompt.length], data: BigInt64Array.from(prompt, BigInt) } },
  batchSize: 1,
  shapeKey: "",
  sampling: { ...GREEDY, maxTokens },
});

async function generate(g: GeneratorInstances, prompt: number[], maxTokens: number): Promise<number[]> {
  const out: number[] = [];
  for await (const part of g.stream(request(prompt, maxTokens), { signal: new AbortController().signal })) out.push(...Array.from(part.output_ids!.data as BigInt64Array, Number));
  return out;
}

const prompt = (seed: number, length: number) => Array.from({ length }, (_, i) => (seed * 31 + i * 7) % (decoderVocabSize() - 3));

describe("GeneratorInstances (a generator's instance_group count)", () => {
  it("spreads concurrent requests over both instances, each answering as one instance alone would", async () => {
    const { g, instances } = generator(2);
    const prompts = Array.from({ length: 6 }, (_, i) => prompt(i + 1, 5 + i));
    const started = prompts.map((p) => generate(g, p, 6));
    // Routed by load as they arrive: three each, before any has run.
    expect(g.loops.map((l) => l.inflight())).toEqual([3, 3]);
    expect(g.usage.waiting + g.usage.running).toBe(6);
    const answers = await Promise.all(started);
    answers.forEach((answer, i) => expect(answer).toEqual(referenceGreedy(prompts[i]!, 6)));
    expect(instances.every((instance) => instance.runs > 0)).toBe(true);
    // Each instance's sequences keep ids of their own: the dashboard's slots never mix two sequences.
    const ids = g.recentSlots().flat().filter((id) => id > 0);
    expect(new Set(ids.filter((id) => id % 2 === 1)).size).toBe(3);
    expect(new Set(ids.filter((id) => id % 2 === 0)).size).toBe(3);
    await g.stop();
  });

  it("sums the instances' usage: blocks, bytes and slots are per instance", async () => {
    const one = generator(1).g.usage;
    const two = generator(2).g.usage;
    expect(two.blocks).toBe(2 * one.blocks);
    expect(two.kvBytes).toBe(2 * one.kvBytes);
    expect(two.slots).toBe(2 * one.slots);
    expect(two.kvUsage).toBe(0);
  });

  it("sends a prompt to the instance whose prefix cache holds it when both are idle", async () => {
    const { g, instances } = generator(2);
    const shared = prompt(9, 17);
    // Busy the first instance so the first request lands on the second, which then caches the prompt.
    const busy = generate(g, prompt(3, 4), 40);
    await generate(g, shared, 2);
    await busy;
    const before = instances.map((i) => i.runs);
    await generate(g, shared, 2);
    expect(instances[0]!.runs).toBe(before[0]);
    expect(instances[1]!.runs).toBeGreaterThan(before[1]!);
    expect(g.loops[1]!.usage.prefix.hits).toBeGreaterThan(0);
    await g.stop();
  });
});
