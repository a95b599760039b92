/**
 * Continuous batching for a generator: requests become sequences over a paged KV cache; each
 * iteration `planIteration` (pure) says which sequences compute how many tokens, this applies it —
 * preemptions freeing blocks, admissions claiming prefix-cache hits and fresh blocks — gathers the
 * steps' dense feeds from the cache, runs the decoder, writes the new keys and values back, samples
 * each finished row and streams the token to its request. A sequence leaves the iteration it
 * finishes (a stop token, max_tokens, the model's length) or the one after its client goes away,
 * and its blocks go to whoever waits.
 */
import { Drain } from "../queue/drain.ts";
import { RuntimeError } from "../../core/mod.ts";
import type { Clock, FinishReason, PromptRequest, Tensor, TokenEvent } from "../../core/mod.ts";
import { SignalWatch } from "../queue/signal-watch.ts";
import type { ModelInstance } from "../scheduler.ts";
import type { SchedulerObserver } from "../scheduler-observer.ts";
import { BlockPool } from "./block-pool.ts";
import { planIteration } from "./generation-plan.ts";
import type { IterationPlan, PlannedSeq } from "./generation-plan.ts";
import { KvStore } from "./kv-cache.ts";
import type { KvGeometry, StepRow } from "./kv-cache.ts";
import { logprobOf, sample } from "./sampling.ts";
import { SlotHistory } from "./slot-history.ts";
import { checkedPrompt, newSequence } from "./generation-sequence.ts";
import type { Seq } from "./generation-sequence.ts";

export interface GenerationSchedulerOptions {
  name: string;
  instance: ModelInstance;
  geometry: KvGeometry;
  clock: Clock;
  mode: "continuous" | "static";
  blockSize: number;
  blocks: number;
  maxNumSeqs: number;
  maxBatchedTokens: number;
  /** Prompt plus generated tokens, at most (the model's positions). */
  maxModelLen: number;
  /** Requests waiting at most; beyond, 503 with Retry-After. */
  maxWaiting: number;
  /** Prompt tokens waiting at most; beyond, 503 with Retry-After. */
  maxWaitingTokens: number;
  prefixCaching: boolean;
  /** Token ids below this are the model's (its logits' width): a prompt's others are refused before they reach a batch. */
  vocab: number;
  /** The model's end-of-sequence tokens (generation_config.json's eos_token_id). */
  eosTokenIds: readonly number[];
  /** Told each execution (statistics, the trace timeline), each request's wait, and the generator's own figures (`generation`: vLLM's metrics). */
  observer?: SchedulerObserver;
  /** Which of the generator's instances this is (1-based; the trace's track), and how many there are: sequence ids are `index + k × of`, so no two instances' sequences share an id in the dashboard's slots. */
  instanceIndex?: number;
  instances?: number;
}

/** A generator's state now: sequences running and waiting, the KV cache's use (0–1) and size, prefix-cache counters (tokens). */
export interface GenerationUsage {
  running: number;
  waiting: number;
  kvUsage: number;
  blocks: number;
  prefix: { queries: number; hits: number };
  /** Prompt plus generated tokens a sequence may have. */
  maxModelLen: number;
  /** The KV cache's bytes (allocated at load, freed with the scheduler: a park frees it). */
  kvBytes: number;
  mode: "continuous" | "static";
  /** max_num_seqs: the slots a batch has. */
  slots: number;
}

type LoopProfile = Record<"iterations" | "planMs" | "gatherMs" | "runMs" | "scatterMs" | "sampleMs" | "rows", number>;

/** One instance's loop; it speaks in typed prompts and token events (GeneratorInstances is the Scheduler around it). */
export class GenerationScheduler {
  readonly #o: GenerationSchedulerOptions;
  readonly #pool: BlockPool;
  readonly #kv: KvStore;
  readonly #waiting: Seq[] = [];
  readonly #running: Seq[] = [];
  readonly #byId = new Map<number, Seq>();
  readonly #watch = new SignalWatch<Seq>((seq) => this.#cancel(seq, new RuntimeError("CANCELLED", "the request was cancelled")));
  #nextId: number;
  /** The sequence in each slot, and the last iterations' (the dashboard's picture). */
  readonly #slots: SlotHistory;
  #arrivals = 0;
  #looping = false;
  readonly #drain = new Drain();
  /** Time in the iteration's own work (planning, gathering, scattering, sampling) and in the decoder, for the bench. */
  readonly #profile: LoopProfile = { iterations: 0, planMs: 0, gatherMs: 0, runMs: 0, scatterMs: 0, sampleMs: 0, rows: 0 };

  constructor(options: GenerationSchedulerOptions) {
    this.#o = options;
    this.#nextId = options.instanceIndex ?? 1;
    this.#pool = new BlockPool(options.blocks, options.blockSize);
    this.#kv = new KvStore(options.geometry, options.blocks, options.blockSize);
    this.#slots = new SlotHistory(options.maxNumSeqs);
  }

  /** `#profile`, with how the decode steps got their past (the KV store's counts). */
  get profile(): LoopProfile & { carried: number; rebuilt: number } {
    return { ...this.#profile, carried: this.#kv.stats.carried, rebuilt: this.#kv.stats.rebuilt };
  }

  get queued(): number {
    return this.#waiting.length;
  }

  inflight(): number {
    return this.#waiting.length + this.#running.length;
  }

  /** Refusals beyond the waiting limits are `generate`'s own (503 naming the limit, with Retry-After): the hint says only whether it stops. */
  hasRoom(): boolean {
    return !this.#drain.stopping;
  }

  /** What the dashboard and metrics read. */
  get usage(): GenerationUsage {
    return { running: this.#running.length, waiting: this.#waiting.length, kvUsage: this.#pool.used / this.#pool.size, blocks: this.#pool.size, prefix: this.#pool.prefixStats, maxModelLen: this.#o.maxModelLen, kvBytes: this.#pool.size * KvStore.blockBytes(this.#o.geometry, this.#o.blockSize), mode: this.#o.mode, slots: this.#o.maxNumSeqs };
  }

  /** The last iterations' slots, oldest first (see SlotHistory). */
  recentSlots(): number[][] {
    return this.#slots.recent();
  }

  /** A request's token events as the loop makes them; refusals (INVALID_ARG, UNAVAILABLE) are thrown here, before any. */
  generate(request: PromptRequest, options: { signal: AbortSignal }): AsyncIterable<TokenEvent> {
    const seq = this.#admit(request, options.signal);
    this.#watch.watch(options.signal, seq);
    if (options.signal.aborted) this.#cancel(seq, new RuntimeError("CANCELLED", "the request was cancelled"));
    this.#loop();
    return seq.sink.read();
  }

  async stop(): Promise<void> {
    await this.#drain.stop(this.inflight());
    this.#watch.close();
  }

  /** Checks a request before it waits: cheap refusals first, its prompt's fit in the cache last. */
  #admit(request: PromptRequest, signal: AbortSignal): Seq {
    if (this.#drain.stopping) throw new RuntimeError("UNAVAILABLE", `'${this.#o.name}' is unloading`);
    const ids = checkedPrompt(request, { ...this.#o, blocks: this.#pool.size });
    const retryAfterMs = 1000;
    if (this.#waiting.length >= this.#o.maxWaiting) {
      throw new RuntimeError("UNAVAILABLE", `'${this.#o.name}' has ${this.#waiting.length} requests waiting (generation.max_waiting_requests): try again shortly`, { retryAfterMs });
    }
    const waitingTokens = this.#waiting.reduce((n, s) => n + s.ids.length, 0);
    if (waitingTokens + ids.length > this.#o.maxWaitingTokens && this.#waiting.length > 0) {
      throw new RuntimeError("UNAVAILABLE", `'${this.#o.name}' has ${waitingTokens} prompt tokens waiting (generation.max_waiting_tokens ${this.#o.maxWaitingTokens}): try again shortly`, { retryAfterMs });
    }
    const id = this.#nextId;
    this.#nextId += this.#o.instances ?? 1;
    const seq = newSequence({ id, ids, request, arrival: this.#arrivals++, now: this.#o.clock.now(), signal });
    this.#byId.set(seq.id, seq);
    this.#enqueueWaiting(seq);
    return seq;
  }

  /** How many of `ids`' full blocks this instance's prefix cache holds now (a router's tie-break). */
  cachedBlocks(ids: ArrayLike<number>): number {
    if (!this.#o.prefixCaching || ids.length === 0) return 0;
    return this.#pool.lookup(ids, Math.floor((ids.length - 1) / this.#o.blockSize)).length;
  }

  #enqueueWaiting(seq: Seq): void {
    seq.state = "waiting";
    let at = this.#waiting.length;
    while (at > 0 && (this.#waiting[at - 1]!.priority > seq.priority || (this.#waiting[at - 1]!.priority === seq.priority && this.#waiting[at - 1]!.arrival > seq.arrival))) at--;
    this.#waiting.splice(at, 0, seq);
  }

  #cancel(seq: Seq, error: RuntimeError): void {
    if (seq.state === "done" || seq.cancelled) return;
    seq.cancelled = error;
    // A waiting sequence holds nothing: it goes now. A running one leaves at the next iteration.
    if (seq.state === "waiting") this.#finish(seq, error);
  }

  #loop(): void {
    if (this.#looping) return;
    this.#looping = true;
    void this.#iterate()
      .catch((error: unknown) => {
        // A fault of the loop itself (not of a step): every sequence ends with it rather than the
        // loop restarting into the same fault forever.
        const failure = new RuntimeError("INTERNAL", `the generation loop failed: ${(error as Error).message}`);
        for (const seq of [...this.#running, ...this.#waiting]) this.#finish(seq, failure);
      })
      .finally(() => {
        this.#looping = false;
        if (this.#waiting.length + this.#running.length > 0) this.#loop();
        else this.#drain.settled(0);
      });
  }

  async #iterate(): Promise<void> {
    while (this.#running.length + this.#waiting.length > 0) {
      const now = this.#o.clock.now();
      for (const seq of [...this.#running, ...this.#waiting]) {
        // A request's `timeout` bounds its wait before it starts, as Triton's queue timeout does; once running it runs to its end.
        if (!seq.cancelled && !seq.started && now >= seq.deadlineMs) seq.cancelled = new RuntimeError("UNAVAILABLE", "Request timeout expired");
        if (seq.cancelled) this.#finish(seq, seq.cancelled);
      }
      if (this.#running.length + this.#waiting.length === 0) break;
      let started = this.#o.clock.now();
      const plan = this.#plan();
      const rows = this.#apply(plan);
      this.#profile.planMs += this.#o.clock.now() - started;
      if (rows.length === 0) {
        // Nothing fits this iteration (cannot happen with a request that fits alone); wait a turn.
        await new Promise((resolve) => setTimeout(resolve, 1));
        continue;
      }
      this.#profile.iterations++;
      this.#profile.rows += rows.length;
      this.#slots.record();
      // Decode rows (one token) run together; prompt chunks together: padding a decode row to a chunk's length would waste its compute.
      const decode = rows.filter((r) => r.row.tokens === 1);
      const prefill = rows.filter((r) => r.row.tokens > 1);
      for (const group of [prefill, decode]) {
        if (group.length === 0) continue;
        try {
          await this.#step(group, group === decode);
        } catch (error) {
          // The decoder failed, or a step's own work did: its sequences end with the reason; the
          // rest go on over a past gathered afresh (what was carried may be half-written).
          this.#kv.forget();
          const failure = new RuntimeError("INTERNAL", `the decoder failed: ${(error as Error).message}`);
          for (const { seq } of group) this.#finish(seq, failure);
        }
      }
    }
  }

  /** One execution: a group's feeds gathered, the decoder run, the new keys and values written back, each finished row sampled. */
  async #step(group: { seq: Seq; row: StepRow }[], decoding: boolean): Promise<void> {
    const started = this.#o.clock.now();
    const keys = decoding ? group.map((g) => g.seq.id) : undefined;
    const feeds = this.#kv.feeds(group.map((g) => g.row), keys);
    const gathered = this.#o.clock.now();
    this.#profile.gatherMs += gathered - started;
    const outputs = await this.#o.instance.run(feeds);
    const ran = this.#o.clock.now();
    this.#profile.runMs += ran - gathered;
    this.#kv.scatter(outputs, group.map((g) => g.row), feeds, keys);
    const scattered = this.#o.clock.now();
    this.#profile.scatterMs += scattered - ran;
    this.#sampleRows(group, outputs.logits!);
    const sampled = this.#o.clock.now();
    this.#profile.sampleMs += sampled - scattered;
    // An execution as every scheduler reports one: its rows are the sequences it stepped.
    this.#o.observer?.executed({ rows: group.length, requests: group.length, inputMs: gathered - started, inferMs: ran - gathered, waitMs: 0, outputMs: sampled - ran, startMs: started, instance: this.#o.instanceIndex ?? 1 });
  }

  #plan(): IterationPlan {
    const planned = (seq: Seq, waiting: boolean): PlannedSeq => {
      let owned = 0;
      if (!waiting) for (const b of seq.table) if (this.#pool.holders(b) === 1) owned++;
      const entry: PlannedSeq = { id: seq.id, tokens: seq.ids.length, computed: seq.computed, blocks: seq.table.length, owned, priority: seq.priority, arrival: seq.arrival };
      // A prompt whose logprobs are asked is computed whole: a cached block has no logits to read them from.
      if (waiting && this.#o.prefixCaching && seq.params.promptLogprobs === undefined) {
        const hit = this.#pool.lookup(seq.ids, Math.floor((seq.ids.length - 1) / this.#o.blockSize));
        entry.cached = { blocks: hit.length, idle: this.#pool.idleAmong(hit) };
      }
      return entry;
    };
    // Admission stops at the first that does not fit or at max_num_seqs: the planner never looks
    // past the seats free now (each look at a waiting prompt is a prefix-cache lookup).
    const seats = Math.max(0, this.#o.maxNumSeqs - this.#running.length);
    return planIteration({
      running: this.#running.map((s) => planned(s, false)),
      waiting: this.#waiting.slice(0, seats).map((s) => planned(s, true)),
      available: this.#pool.available,
      blockSize: this.#o.blockSize,
      maxNumSeqs: this.#o.maxNumSeqs,
      maxBatchedTokens: this.#o.maxBatchedTokens,
      mode: this.#o.mode,
    });
  }

  /** Applies a plan: preemptions, admissions, block allocations; the rows to compute. */
  #apply(plan: IterationPlan): { seq: Seq; row: StepRow }[] {
    if (plan.preempted.length > 0) this.#kv.forget();
    for (const id of plan.preempted) {
      const seq = this.#byId.get(id)!;
      this.#release(seq);
      seq.computed = 0;
      if (!seq.promptSent && seq.promptLogprobs) seq.promptLogprobs = [];
      this.#running.splice(this.#running.indexOf(seq), 1);
      this.#slots.free(seq.id);
      this.#enqueueWaiting(seq);
      this.#o.observer?.generation?.preempted?.();
    }
    const rows: { seq: Seq; row: StepRow }[] = [];
    for (const step of plan.steps) {
      const seq = this.#byId.get(step.id)!;
      if (plan.admitted.includes(step.id)) {
        this.#waiting.splice(this.#waiting.indexOf(seq), 1);
        this.#running.push(seq);
        seq.state = "running";
        this.#slots.seat(seq.id);
        // Its wait, once: a preempted sequence's second wait is the scheduler's, not the queue's.
        if (!seq.started) {
          seq.started = true;
          this.#o.observer?.dequeued(this.#o.clock.now() - seq.arrivedMs, this.#o.clock.now());
        }
        if (step.cachedBlocks > 0) {
          const hit = this.#pool.lookup(seq.ids, step.cachedBlocks);
          this.#pool.claim(hit);
          seq.table.push(...hit);
        }
        if (this.#o.prefixCaching) this.#pool.counted(Math.floor((seq.ids.length - 1) / this.#o.blockSize) * this.#o.blockSize, step.cachedBlocks * this.#o.blockSize);
        seq.computed = step.from;
      }
      const fresh = this.#pool.allocate(step.newBlocks);
      seq.table.push(...fresh);
      rows.push({ seq, row: { table: seq.table, ids: seq.ids, from: step.from, tokens: step.tokens } });
    }
    return rows;
  }

  #release(seq: Seq): void {
    this.#pool.release(seq.table);
    seq.table = [];
  }

  /** After a step: positions now computed, full blocks cached, and a token for each row whose known tokens are all computed. */
  #sampleRows(group: { seq: Seq; row: StepRow }[], logits: Tensor): void {
    const [, width, vocab] = logits.shape as [number, number, number];
    const data = logits.data as Float32Array;
    const now = this.#o.clock.now();
    group.forEach(({ seq, row }, r) => {
      const before = seq.computed;
      seq.computed = row.from + row.tokens;
      if (this.#o.prefixCaching) {
        for (let b = Math.floor(before / this.#o.blockSize); b < Math.floor(seq.computed / this.#o.blockSize); b++) this.#pool.register(seq.table, b, seq.ids);
      }
      if (seq.params.promptLogprobs !== undefined && !seq.promptSent) this.#promptLogprobs(seq, row, data.subarray(r * width * vocab, (r + 1) * width * vocab), vocab);
      if (seq.cancelled || seq.computed < seq.ids.length) return;
      if (seq.params.maxTokens === 0) return this.#finish(seq, undefined, "length"); // the prompt's logprobs were all that was asked
      const at = (r * width + row.tokens - 1) * vocab;
      const generated = seq.ids.length - seq.promptLength;
      const suppress = generated < seq.params.minTokens ? [...seq.stops, ...this.#o.eosTokenIds] : undefined;
      const chosen = sample(data.subarray(at, at + vocab), seq.params, { output: seq.output, prompt: seq.prompt }, seq.random, suppress);
      seq.ids.push(chosen.token);
      seq.output.set(chosen.token, (seq.output.get(chosen.token) ?? 0) + 1);
      this.#o.observer?.generation?.token?.(generated === 0 ? { first: now - seq.arrivedMs } : { gap: now - seq.lastTokenMs! });
      seq.lastTokenMs = now;
      const stopped = seq.stops.has(chosen.token) || (!seq.params.ignoreEos && this.#o.eosTokenIds.includes(chosen.token));
      const finish: FinishReason | undefined = stopped ? "stop" : generated + 1 >= seq.params.maxTokens || seq.ids.length >= this.#o.maxModelLen ? "length" : undefined;
      seq.sink.push(finish ? { kind: "token", chosen, finish } : { kind: "token", chosen });
      if (finish) this.#finish(seq, undefined, finish);
    });
  }

  /**
   * The logprobs of the prompt tokens this prefill row predicted (position p predicts token p + 1),
   * kept until the prompt is whole, then sent as one response before any generated token.
   */
  #promptLogprobs(seq: Seq, row: StepRow, logits: Float32Array, vocab: number): void {
    const kept = (seq.promptLogprobs ??= []);
    for (let p = row.from; p < row.from + row.tokens && p + 1 < seq.promptLength; p++) {
      kept[p] = logprobOf(logits.subarray((p - row.from) * vocab, (p - row.from + 1) * vocab), seq.ids[p + 1]!, seq.params.promptLogprobs!);
    }
    if (row.from + row.tokens < seq.promptLength) return;
    seq.promptSent = true;
    const top = seq.params.promptLogprobs!;
    const entries = kept.slice(0, seq.promptLength - 1);
    seq.promptLogprobs = undefined;
    seq.sink.push(seq.params.maxTokens === 0 ? { kind: "prompt", entries, top, finish: "length" } : { kind: "prompt", entries, top });
  }

  /** A sequence leaves: its blocks freed, its stream ended (with `error` when it failed or was cancelled). */
  #finish(seq: Seq, error?: RuntimeError, reason?: FinishReason): void {
    if (seq.state === "done") return;
    const list = seq.state === "running" ? this.#running : this.#waiting;
    list.splice(list.indexOf(seq), 1);
    if (seq.state === "running") this.#slots.free(seq.id);
    this.#release(seq);
    seq.state = "done";
    this.#byId.delete(seq.id);
    this.#watch.forget(seq.signal, seq);
    this.#o.observer?.generation?.finished?.({ promptTokens: seq.promptLength, generatedTokens: seq.ids.length - seq.promptLength, e2eMs: this.#o.clock.now() - seq.arrivedMs, outcome: error ? "cancelled" : "done", ...(reason ? { reason } : {}) });
    seq.sink.end(error);
  }
}
