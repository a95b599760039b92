/**
 * A generator's instances (`instance_group` count): one continuous-batching loop per instance, each
 * with its own KV cache, as data-parallel vLLM runs one engine per replica. A request goes to the
 * least loaded (running plus waiting sequences); among equally loaded ones, to the one whose prefix
 * cache holds more of its prompt, then to the first. A sequence stays on its instance to its end:
 * its past lives in that instance's cache.
 */
import type { PromptRequest, SamplingParams, TokenEvent } from "../../core/mod.ts";
import type { ScheduledRequest, ScheduledResult, Scheduler } from "../scheduler.ts";
import { GenerationScheduler } from "./generation-scheduler.ts";
import type { GenerationSchedulerOptions, GenerationUsage } from "./generation-scheduler.ts";
import { asTensors, promptRequest, wholeTensors } from "./token-tensors.ts";

/** A generator's loops' options, and the sampling of a KServe-form request whose parameters are silent on it. */
export interface GeneratorOptions extends Omit<GenerationSchedulerOptions, "instance" | "instanceIndex" | "instances"> {
  /** Greedy, 16 tokens, the generator's generation_config.json. */
  samplingDefaults: SamplingParams;
}

/** What the deployment reads of a generator, whatever its instance count (metrics, the dashboard). */
export interface Generator extends Scheduler {
  /** A request's token events as they are made (the OpenAI routes' form; `stream` is KServe's). */
  generate(request: PromptRequest, options: { signal: AbortSignal }): AsyncIterable<TokenEvent>;
  readonly usage: GenerationUsage;
  recentSlots(): number[][];
}

/** Whether `scheduler` generates tokens (continuous batching). */
export function isGenerator(scheduler: Scheduler): scheduler is Generator {
  return scheduler instanceof GeneratorInstances;
}

export class GeneratorInstances implements Generator {
  readonly #loops: GenerationScheduler[];
  readonly #defaults: SamplingParams;

  /** One loop per instance in `instances`, each with `blocks` KV blocks of its own. */
  constructor({ samplingDefaults, ...options }: GeneratorOptions, instances: readonly GenerationSchedulerOptions["instance"][]) {
    if (instances.length === 0) throw new Error("a generator needs an instance");
    this.#defaults = samplingDefaults;
    this.#loops = instances.map((instance, i) => new GenerationScheduler({ ...options, instance, instanceIndex: i + 1, instances: instances.length }));
  }

  /** The loops, one per instance (the bench reads their profiles). */
  get loops(): readonly GenerationScheduler[] {
    return this.#loops;
  }

  get queued(): number {
    return this.#sum((l) => l.queued);
  }

  inflight(): number {
    return this.#sum((l) => l.inflight());
  }

  hasRoom(): boolean {
    return this.#loops[0]!.hasRoom();
  }

  /** A KServe-form request (`input_ids`, sampling in its parameters): every token at once, with their logprobs and the finish reason. */
  async enqueue(request: ScheduledRequest, options: { signal?: AbortSignal } = {}): Promise<ScheduledResult> {
    const events: TokenEvent[] = [];
    for await (const event of this.generate(promptRequest(request, this.#defaults), { signal: options.signal ?? new AbortController().signal })) events.push(event);
    return wholeTensors(events);
  }

  /** A KServe-form request: each token as the tensors of a response. */
  stream(request: ScheduledRequest, options: { signal: AbortSignal }): AsyncIterable<ScheduledResult> {
    return asTensors(this.generate(promptRequest(request, this.#defaults), options));
  }

  generate(request: PromptRequest, options: { signal: AbortSignal }): AsyncIterable<TokenEvent> {
    return this.#route(request.ids).generate(request, options);
  }

  async stop(): Promise<void> {
    await Promise.all(this.#loops.map((l) => l.stop()));
  }

  /** The instances' state together: sequences, blocks, bytes and slots summed; the cache's use over all blocks. */
  get usage(): GenerationUsage {
    const each = this.#loops.map((l) => l.usage);
    if (each.length === 1) return each[0]!;
    const sum = (f: (u: GenerationUsage) => number) => each.reduce((n, u) => n + f(u), 0);
    const blocks = sum((u) => u.blocks);
    return {
      running: sum((u) => u.running),
      waiting: sum((u) => u.waiting),
      kvUsage: sum((u) => u.kvUsage * u.blocks) / blocks,
      blocks,
      prefix: { queries: sum((u) => u.prefix.queries), hits: sum((u) => u.prefix.hits) },
      maxModelLen: each[0]!.maxModelLen,
      kvBytes: sum((u) => u.kvBytes),
      mode: each[0]!.mode,
      slots: sum((u) => u.slots),
    };
  }

  /**
   * The instances' last iterations side by side, newest aligned: row i holds each instance's
   * slots of its i-th most recent iteration, first instance first (its loops do not step together).
   */
  recentSlots(): number[][] {
    const each = this.#loops.map((l) => l.recentSlots());
    if (each.length === 1) return each[0]!;
    const depth = Math.max(...each.map((rows) => rows.length));
    return Array.from({ length: depth }, (_, i) =>
      each.flatMap((rows, l) => rows[rows.length - depth + i] ?? new Array<number>(this.#loops[l]!.usage.slots).fill(0)),
    );
  }

  #route(ids: readonly number[]): GenerationScheduler {
    if (this.#loops.length === 1) return this.#loops[0]!;
    const least = Math.min(...this.#loops.map((l) => l.inflight()));
    const tied = this.#loops.filter((l) => l.inflight() === least);
    if (tied.length === 1) return tied[0]!;
    let best = tied[0]!;
    let bestHit = best.cachedBlocks(ids);
    for (const loop of tied.slice(1)) {
      const hit = loop.cachedBlocks(ids);
      if (hit > bestHit) [best, bestHit] = [loop, hit];
    }
    return best;
  }

  #sum(f: (l: GenerationScheduler) => number): number {
    return this.#loops.reduce((n, l) => n + f(l), 0);
  }
}

