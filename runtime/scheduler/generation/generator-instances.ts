/**
 * A generator's instances (`instance_group` count): one continuous-batching loop per instance, each
 * with its own KV cache, as data-parallel vLLM runs one engine per replica. A request goes to the
 * least loaded (running plus waiting sequences); among equally loaded ones, to the one whose prefix
 * cache holds more of its prompt, then to the first. A sequence stays on its instance to its end:
 * its past lives in that instance's cache.
 */
import type { ScheduledRequest, ScheduledResult, Scheduler } from "../scheduler.ts";
import { GenerationScheduler } from "./generation-scheduler.ts";
import type { GenerationSchedulerOptions, GenerationUsage } from "./generation-scheduler.ts";

/** What the deployment reads of a generator, whatever its instance count (metrics, the dashboard). */
export interface Generator extends Scheduler {
  readonly usage: GenerationUsage;
  recentSlots(): number[][];
}

/** Whether `scheduler` generates tokens (continuous batching). */
export function isGenerator(scheduler: Scheduler): scheduler is Generator {
  return scheduler instanceof GeneratorInstances;
}

export class GeneratorInstances implements Generator {
  readonly #loops: GenerationScheduler[];

  /** One loop per instance in `options.instances`, each with `blocks` KV blocks of its own. */
  constructor(options: Omit<GenerationSchedulerOptions, "instance" | "instanceIndex" | "instances">, instances: readonly GenerationSchedulerOptions["instance"][]) {
    if (instances.length === 0) throw new Error("a generator needs an instance");
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

  enqueue(request: ScheduledRequest, options?: { signal?: AbortSignal }): Promise<ScheduledResult> {
    return this.#route(request).enqueue(request, options);
  }

  stream(request: ScheduledRequest, options: { signal: AbortSignal }): AsyncIterable<ScheduledResult> {
    return this.#route(request).stream(request, options);
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

  #route(request: ScheduledRequest): GenerationScheduler {
    if (this.#loops.length === 1) return this.#loops[0]!;
    const least = Math.min(...this.#loops.map((l) => l.inflight()));
    const tied = this.#loops.filter((l) => l.inflight() === least);
    if (tied.length === 1) return tied[0]!;
    const prompt = request.feeds.input_ids;
    if (prompt?.datatype !== "INT64") return tied[0]!; // refused by the loop, naming the field
    const ids = Array.from(prompt.data as BigInt64Array, Number);
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
