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

async function generate(g: GeneratorInstances, prompt: number[], maxTokens: number): Promise<number[]> {
  const out: number[] = [];
  for await (const event of g.generate({ ids: prompt, sampling: { ...GREEDY, maxTokens } }, { signal: new AbortController().signal })) if (event.kind === "token") out.push(event.chosen.token);
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

  it("a KServe-form request (input_ids, parameters over the defaults) streams each token as tensors, and enqueue answers them whole", async () => {
    const { g: s } = generator(1);
    const ids = prompt(5, 6);
    const kserve: ScheduledRequest = { feeds: { input_ids: { datatype: "INT64", shape: [ids.length], data: BigInt64Array.from(ids, BigInt) } }, batchSize: 1, shapeKey: "", parameters: { max_tokens: 4 } };
    const parts = [];
    for await (const part of s.stream(kserve, { signal: new AbortController().signal })) parts.push(part);
    expect(parts.map((p) => Number((p.output_ids!.data as BigInt64Array)[0]))).toEqual(referenceGreedy(ids, 4));
    expect(parts.map((p) => p.finish_reason!.shape[0])).toEqual([0, 0, 0, 1]);
    expect(new TextDecoder().decode((parts[3]!.finish_reason!.data as Uint8Array[])[0])).toBe("length");
    const whole = await s.enqueue(kserve);
    expect(Array.from(whole.output_ids!.data as BigInt64Array, Number)).toEqual(referenceGreedy(ids, 4));
    expect(whole.logprobs!.shape).toEqual([4]);
    // Silent on max_tokens: the generator's defaults (GREEDY's 16 tokens here).
    expect((await s.enqueue({ ...kserve, parameters: {} })).output_ids!.shape).toEqual([16]);
    expect(() => s.stream({ ...kserve, feeds: { input_ids: { datatype: "INT32", shape: [1], data: Int32Array.of(1) } } }, { signal: new AbortController().signal })).toThrow(/'input_ids' \(INT64\)/);
  });
});
