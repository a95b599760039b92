import { describe, expect, it } from "vitest";
import { GREEDY, systemClock } from "../../../../runtime/core/mod.ts";
import type { PromptRequest, SamplingParams } from "../../../../runtime/core/mod.ts";
import { GenerationScheduler } from "../../../../runtime/scheduler/generation/generation-scheduler.ts";
import type { GenerationSchedulerOptions } from "../../../../runtime/scheduler/generation/generation-scheduler.ts";
import { decoderReference, decoderVocabSize } from "../../../../models/decoder.ts";
import { DECODER_GEOMETRY, decoderInstance, referenceGreedy } from "../../../../harness/decoder-instance.ts";
import { transferables } from "../../../../runtime/backends/_worker-protocol.ts";

function scheduler(options: Partial<GenerationSchedulerOptions> = {}) {
  const instance = decoderInstance();
  const s = new GenerationScheduler({
    name: "tiny_gpt",
    instance,
    geometry: DECODER_GEOMETRY,
    clock: systemClock,
    mode: "continuous",
    blockSize: 4,
    blocks: 256,
    maxNumSeqs: 16,
    maxBatchedTokens: 64,
    maxModelLen: 512,
    maxWaiting: 64,
    maxWaitingTokens: 1 << 20,
    prefixCaching: true, vocab: decoderVocabSize(),
    eosTokenIds: [],
    ...options,
  });
  return { s, instance };
}

const request = (prompt: number[], sampling: Partial<SamplingParams> = {}): PromptRequest => ({ ids: prompt, sampling: { ...GREEDY, ...sampling } });

async function generate(s: GenerationScheduler, prompt: number[], sampling: Partial<SamplingParams> = {}, signal?: AbortSignal): Promise<number[]> {
  const out: number[] = [];
  for await (const event of s.generate(request(prompt, sampling), { signal: signal ?? new AbortController().signal })) if (event.kind === "token") out.push(event.chosen.token);
  return out;
}

/** A seeded prompt of `length` tokens. */
function prompt(seed: number, length: number): number[] {
  let x = seed;
  return Array.from({ length }, () => (x = (x * 1103515245 + 12345) % 2147483648) % (decoderVocabSize() - 3));
}

describe("GenerationScheduler (continuous batching on the example decoder)", () => {
  it("greedy tokens equal the reference forward pass's", async () => {
    const { s } = scheduler();
    const ids = prompt(1, 7);
    expect(await generate(s, ids, { maxTokens: 6 })).toEqual(referenceGreedy(ids, 6));
  });

  it("many concurrent requests of different lengths give each the tokens it gets alone", async () => {
    const cases = Array.from({ length: 12 }, (_, i) => ({ ids: prompt(i + 10, 3 + ((i * 7) % 29)), maxTokens: 2 + ((i * 13) % 40) }));
    const alone: number[][] = [];
    for (const c of cases) alone.push(await generate(scheduler({ maxNumSeqs: 1 }).s, c.ids, { maxTokens: c.maxTokens }));
    const { s, instance } = scheduler({ maxBatchedTokens: 24 });
    const together = await Promise.all(cases.map((c) => generate(s, c.ids, { maxTokens: c.maxTokens })));
    expect(together).toEqual(alone);
    // They shared iterations: fewer runs than tokens, and batches of several rows; steady decode
    // steps took their past from the step before, the others gathered it from the blocks.
    expect(Math.max(...instance.rows)).toBeGreaterThan(4);
    expect(s.profile.carried).toBeGreaterThan(10);
    expect(s.profile.rebuilt).toBeGreaterThan(3);
    expect(s.usage.kvUsage).toBe(0);
  });

  it("preempted sequences are recomputed and still give the same tokens", async () => {
    const cases = Array.from({ length: 8 }, (_, i) => ({ ids: prompt(i + 40, 5 + i * 3), maxTokens: 30 }));
    const alone: number[][] = [];
    for (const c of cases) alone.push(await generate(scheduler({ maxNumSeqs: 1 }).s, c.ids, { maxTokens: c.maxTokens }));
    let preemptions = 0;
    // 40 blocks of 4 tokens: two or three sequences of ~60 tokens at once.
    const { s } = scheduler({ blocks: 40, observer: { dequeued() {}, executed() {}, generation: { preempted: () => preemptions++ } } });
    expect(await Promise.all(cases.map((c) => generate(s, c.ids, { maxTokens: c.maxTokens })))).toEqual(alone);
    expect(preemptions).toBeGreaterThan(0);
    expect(s.usage.kvUsage).toBe(0);
  });

  it("a prompt whose prefix is cached reuses its blocks and gives the same tokens", async () => {
    const { s } = scheduler();
    const ids = prompt(7, 23);
    const first = await generate(s, ids, { maxTokens: 8 });
    const before = s.usage.prefix.hits;
    expect(await generate(s, ids, { maxTokens: 8 })).toEqual(first);
    // 22 of 23 tokens can come from the cache: 5 full blocks of 4.
    expect(s.usage.prefix.hits - before).toBe(20);
    const longer = [...ids, ...first, 5, 6];
    expect(await generate(s, longer, { maxTokens: 5 })).toEqual(await generate(scheduler({ prefixCaching: false }).s, longer, { maxTokens: 5 }));
  });

  it("a prompt's own logprobs (promptLogprobs) are the reference's, across prefill chunks, with its prefix cached before, and max_tokens 0 ends after them", async () => {
    const { s } = scheduler({ maxBatchedTokens: 8 }); // a 30-token prompt in four chunks
    const ids = prompt(11, 30);
    await generate(s, ids, { maxTokens: 1 }); // its full blocks now in the prefix cache
    const events = [];
    for await (const event of s.generate(request(ids, { maxTokens: 0, promptLogprobs: 2 }), { signal: new AbortController().signal })) events.push(event);
    expect(events).toHaveLength(1);
    const [event] = events;
    if (event?.kind !== "prompt") throw new Error(`expected the prompt's logprobs, got ${JSON.stringify(event)}`);
    expect(event.finish).toBe("length");
    const logits = decoderReference(ids);
    const expected = ids.slice(1).map((token, p) => {
      const row = logits[p]!;
      const max = Math.max(...row);
      const norm = max + Math.log(row.reduce((sum, v) => sum + Math.exp(v - max), 0));
      return row[token]! - norm;
    });
    expect(event.entries).toHaveLength(29);
    event.entries.forEach((e, i) => expect(e.logprob).toBeCloseTo(expected[i]!, 3));
    expect(event.entries.every((e) => e.top?.tokens.length === 2)).toBe(true);
  });

  it("the same seed gives the same sampled tokens alone and in a batch", async () => {
    const sampling = { temperature: 1, topP: 0.9, topK: 50, seed: 1234, maxTokens: 12 };
    const ids = prompt(3, 9);
    const alone = await generate(scheduler().s, ids, sampling);
    const { s } = scheduler();
    const [batched] = await Promise.all([generate(s, ids, sampling), ...[4, 5, 6].map((k) => generate(s, prompt(k, 11), { temperature: 1, maxTokens: 12 }))]);
    expect(batched).toEqual(alone);
  });

  it("a client that goes away mid-prefill or mid-decode frees its blocks at the next iteration", async () => {
    const { s } = scheduler({ maxBatchedTokens: 8 });
    const prefill = new AbortController();
    const decode = new AbortController();
    // Settled into values at once: each ends before the other is awaited.
    const long = generate(s, prompt(9, 100), { maxTokens: 5 }, prefill.signal).then(() => undefined, (error: unknown) => error);
    const tokens: number[] = [];
    const streaming = (async () => {
      for await (const event of s.generate(request(prompt(8, 4), { maxTokens: 400 }), { signal: decode.signal })) {
        if (event.kind === "token") tokens.push(event.chosen.token);
        // The long prompt is still being prefilled, 7 tokens an iteration beside this stream's one.
        if (tokens.length === 1) prefill.abort();
        if (tokens.length === 3) decode.abort();
      }
    })().then(() => undefined, (error: unknown) => error);
    expect(await long).toMatchObject({ code: "CANCELLED" });
    expect(await streaming).toMatchObject({ code: "CANCELLED" });
    expect(tokens.length).toBeLessThan(6);
    expect(s.usage).toMatchObject({ running: 0, waiting: 0, kvUsage: 0 });
  });

  it("a request's timeout bounds its wait before it starts, as Triton's queue timeout does", async () => {
    const { s } = scheduler({ maxNumSeqs: 1 });
    const running = generate(s, prompt(1, 5), { maxTokens: 300 });
    const waiting = s.generate({ ...request(prompt(2, 5), { maxTokens: 5 }), timeoutMs: 5 }, { signal: new AbortController().signal });
    const drained = (async () => {
      for await (const _ of waiting);
    })();
    await expect(drained).rejects.toMatchObject({ code: "UNAVAILABLE", message: "Request timeout expired" });
    // The running one is not cut short by anyone's timeout.
    expect(await running).toHaveLength(300);
  });

  it("refuses beyond its waiting limits at once, with a time to retry, and a prompt that cannot fit with 400", async () => {
    const { s } = scheduler({ maxNumSeqs: 1, maxWaiting: 2 });
    const running = [generate(s, prompt(1, 5), { maxTokens: 20 }), generate(s, prompt(2, 5), { maxTokens: 20 }), generate(s, prompt(3, 5), { maxTokens: 20 })];
    // One runs (after the loop's first turn), two wait; the fourth is over the limit.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(() => s.generate(request(prompt(4, 5)), { signal: new AbortController().signal })).toThrow(expect.objectContaining({ code: "UNAVAILABLE", retryAfterMs: 1000 }));
    expect(() => s.generate(request(prompt(4, 500), { maxTokens: 20 }), { signal: new AbortController().signal })).toThrow(/exceed the model's length of 512/);
    await Promise.all(running);
  });

  it("on an instance that takes its feeds' buffers (a worker's), decode steps still carry their past, with the same tokens", async () => {
    const cases = Array.from({ length: 6 }, (_, i) => ({ ids: prompt(i + 60, 4 + i * 5), maxTokens: 12 + i * 3 }));
    const alone: number[][] = [];
    for (const c of cases) alone.push(await generate(scheduler({ maxNumSeqs: 1 }).s, c.ids, { maxTokens: c.maxTokens }));
    const { s, instance } = scheduler();
    const run = instance.run.bind(instance);
    // What posting the feeds to a worker does: their buffers move, leaving the scheduler's detached.
    instance.run = (feeds) => run(structuredClone(feeds, { transfer: transferables(feeds) }));
    expect(await Promise.all(cases.map((c) => generate(s, c.ids, { maxTokens: c.maxTokens })))).toEqual(alone);
    expect(s.profile.carried + s.profile.rebuilt).toBeGreaterThan(20);
  });

  it("a step that fails after the decoder ran ends its sequences with INTERNAL; the loop does not spin on it", async () => {
    const { s, instance } = scheduler();
    const run = instance.run.bind(instance);
    // A decoder whose outputs lack its present.* (the KV scatter throws): every request must end, naming it.
    instance.run = async (feeds) => ({ logits: (await run(feeds)).logits! });
    const outcomes = await Promise.allSettled([generate(s, prompt(1, 6), { maxTokens: 4 }), generate(s, prompt(2, 9), { maxTokens: 4 })]);
    for (const outcome of outcomes) expect(outcome).toMatchObject({ status: "rejected", reason: { code: "INTERNAL", message: expect.stringMatching(/present\.0\.key/) } });
    expect(s.inflight()).toBe(0);
    instance.run = run;
    expect(await generate(s, prompt(3, 5), { maxTokens: 3 })).toEqual(referenceGreedy(prompt(3, 5), 3));
  });
});
