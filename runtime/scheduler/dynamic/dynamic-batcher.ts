import { RuntimeError } from "../../core/mod.ts";
import type { Clock } from "../../core/mod.ts";
import { batchOf, splitBatch } from "../../tensor/mod.ts";
import { PriorityQueue } from "../queue/priority-queue.ts";
import type { LevelPolicy, QueueEntry } from "../queue/priority-queue.ts";
import type { DispatchReason, SchedulerObserver } from "../scheduler-observer.ts";
import type { Arrivals, InstanceScheduler, ModelInstance, ScheduledRequest, ScheduledResult } from "../scheduler.ts";
import { missesDeadline, planBatch } from "./adaptive-law.ts";
import { ArrivalOutlook } from "./arrival-outlook.ts";
import { CostModel } from "./cost-model.ts";
import { PreciseTimer } from "./precise-timer.ts";

export interface DynamicBatcherOptions {
  instances: readonly ModelInstance[];
  /** Most rows in one execution; 1 = no batching (each request runs alone, whatever its own batch). */
  maxBatchSize: number;
  /** Sizes that dispatch at once when formed. */
  preferredBatchSizes?: readonly number[];
  /** How long the oldest request may wait for a fuller batch. 0 = dispatch what is there. */
  maxQueueDelayMs?: number;
  /** Wait by the adaptive law (adaptive-law.ts) instead of a fixed delay, and shed requests that would miss this. */
  targetLatencyMs?: number;
  /** Deliver responses in dispatch order even when instances finish out of order. */
  preserveOrdering?: boolean;
  /** Policies of levels 1..N; default: one level, no limits, no timeouts. */
  levels?: LevelPolicy[];
  defaultLevel?: number;
  observer?: SchedulerObserver;
  clock: Clock;
  /**
   * Waits until `instance` may execute (Triton's rate limiter) and resolves with the function that
   * lets the next one go. A formed batch waits here on its instance, counted as queued.
   */
  acquire?: (instance: ModelInstance) => Promise<() => void>;
  /**
   * Hand each execution its requests' own signals (`requestSignals`), so code that runs them (a
   * handler) learns when a client went away. Off for models: reading a signal costs on the hot path.
   */
  requestSignals?: boolean;
  /**
   * What the server knows of requests still to come (the HTTP server's connections,
   * call/client-connections.ts). When none can arrive (`mayArrive`), waiting for a fuller batch
   * gains nothing: the batch leaves as a delay's end would send it. Where the next one is expected
   * (`expectedAt`), the adaptive law weighs that instead of the mean gap. Absent: anything may
   * arrive, unpredicted.
   */
  arrivals?: Arrivals;
}

interface Pending {
  request: ScheduledRequest;
  /** Where the request's signal is read from, only when the instance is handed the signals. */
  source?: { readonly signal?: AbortSignal };
  resolve(result: ScheduledResult): void;
  reject(error: unknown): void;
  /** Its queue timeout's timer, while one runs. */
  timer?: unknown;
  /** The signal it is registered under while it waits (see `#waiting`). */
  signal?: AbortSignal;
  /** Set once it left the queue (dispatched, shed, timed out, cancelled). */
  left?: boolean;
}

type Entry = QueueEntry<Pending>;
/** A batch that leaves now, and why. */
type Leaving = { entries: Entry[]; reason: DispatchReason };
type Outcome = { ok: true; value: ScheduledResult } | { ok: false; error: RuntimeError };

const UNLIMITED: LevelPolicy = { timeoutAction: "REJECT", defaultTimeoutMs: 0, allowTimeoutOverride: false, maxQueueSize: 0 };

/**
 * Triton's dynamic batcher. Policy: whenever an instance is free, walk the queue in service order
 * (priority level first, then arrival) and take the first request plus every following one with
 * the same shape key while the rows fit in `maxBatchSize`; the first request that cannot join ends
 * the batch, so nothing behind it overtakes it. A batch always holds at least one request, even
 * one whose own batch is larger than the limit (it was validated against the model already).
 * Dispatch at once when the batch is full or reaches the largest preferred size; otherwise when
 * the oldest request has waited the queue delay (at once when it is 0), taking the largest
 * preferred size formed if any, else everything formed. A wait starts only while waits have been
 * paying (ArrivalOutlook: in a closed loop at concurrency 1 nothing can join, so a lone request
 * leaves at once) and while another request can still arrive (`arrivals`). A batch for an
 * instance that computes on a later turn of the event loop is formed on that turn
 * (`#formsOnTurn`). Each execution reports why its batch left (`ExecutionTiming.reason`). With a
 * latency target the wait follows the adaptive law instead of the fixed delay, and a request that
 * can no longer meet its deadline is shed with UNAVAILABLE.
 */
export class DynamicBatcher implements InstanceScheduler {
  readonly #options: DynamicBatcherOptions;
  readonly #queue: PriorityQueue<Pending>;
  readonly #free: ModelInstance[];
  /** Fitted execution cost; present only with a latency target. */
  readonly #cost?: CostModel;
  /** Smoothed wait of an execution for its turn before it computes (ms), where the instance tells it apart. */
  #turnMs?: number;
  readonly #outlook = new ArrivalOutlook();
  readonly #timer: PreciseTimer;
  /** Rows formed when the current wait began (undefined: not waiting), to learn whether it paid. */
  #waitRows?: number;
  /** When the current wait ends. */
  #waitUntil = 0;
  /**
   * Whether it ends on the clock's timer alone, without polling: a closed loop's wait under the
   * adaptive law, which an arrival or `no_arrivals` ends long before the timer as a rule; polling
   * its tail spent the event loop that reads those arrivals (mlp_adaptive at 32 clients: 4844 req/s
   * polled, 5670 not; bench/RESULTS.md, "Batches formed on the compute turn").
   */
  #waitCoarse = false;
  /** When the batch being formed could first have left (an instance free, a request queued); undefined between batches. */
  #readyAt?: number;
  #running = 0;
  #stopping = false;
  #drained: (() => void)[] = [];
  /** Resolves when the most recently dispatched batch has delivered (preserve_ordering). */
  #lastDelivery: Promise<void> = Promise.resolve();
  #instances: number;
  /** Callers of removeInstance() waiting for a busy instance to come back. */
  #retiring: ((instance: ModelInstance) => void)[] = [];
  /** Requests in formed batches waiting for the rate limiter (still pending, as in Triton). */
  #holding = 0;

  constructor(options: DynamicBatcherOptions) {
    if (options.instances.length === 0) throw new Error("a batcher needs at least one instance");
    this.#options = options;
    this.#free = [...options.instances];
    this.#instances = options.instances.length;
    this.#queue = new PriorityQueue(options.levels ?? [UNLIMITED], options.defaultLevel ?? 1);
    this.#timer = new PreciseTimer(options.clock);
    if (options.targetLatencyMs) this.#cost = new CostModel();
  }

  /** The fixed queue delay (without a latency target). */
  get queueDelayMs(): number {
    return this.#options.maxQueueDelayMs ?? 0;
  }

  /** The fitted execution cost `a·n + b` (ms) where a latency target is set. */
  get cost(): { a: number; b: number } | undefined {
    return this.#cost?.fit();
  }

  enqueue(request: ScheduledRequest, options: { signal?: AbortSignal } = {}): Promise<ScheduledResult> {
    if (this.#stopping) return Promise.reject(new RuntimeError("UNAVAILABLE", "the model is being unloaded"));
    const level = this.#queue.levelFor(request.priority);
    if (this.#queue.isFull(level)) {
      return Promise.reject(new RuntimeError("UNAVAILABLE", `Exceeds maximum queue size (${this.#queue.policy(level).maxQueueSize} at priority level ${level})`));
    }
    const { clock } = this.#options;
    return new Promise<ScheduledResult>((resolve, reject) => {
      const pending: Pending = { request, source: this.#options.requestSignals ? options : undefined, resolve, reject };
      const entry: Entry = { item: pending, level, enqueuedAt: clock.now(), delayed: false };
      const policy = this.#queue.policy(level);
      const timeoutMs = effectiveTimeout(policy, request.timeoutMs);
      if (timeoutMs > 0) {
        pending.timer = clock.setTimeout(() => {
          pending.timer = undefined;
          if (policy.timeoutAction === "REJECT") return this.#leave(entry, new RuntimeError("UNAVAILABLE", "Request timeout expired"));
          this.#queue.delay(entry);
          this.#pump();
        }, timeoutMs);
      }
      this.#outlook.arrived(entry.enqueuedAt);
      this.#queue.push(entry);
      this.#pump();
      if (pending.left) return;
      // Only a request left waiting listens for its client going away: `options.signal` may be
      // built on first read (the Node adapter's is), and one dispatched at once runs anyway.
      const signal = options.signal;
      if (!signal) return;
      if (signal.aborted) return this.#leave(entry, cancelled());
      this.#watch(signal, entry);
    });
  }

  /**
   * Registers a waiting request under its signal. One abort listener per signal, not per request:
   * a signal is usually a connection's, shared by the requests it carries one after another, and
   * an EventTarget listener added and removed per queued request cost ~2.5 µs of the hot path
   * (a profile of simple at 8 JSON clients, Node). The listener holds the batcher weakly: a keep-alive connection
   * must not keep an unloaded version's batcher alive. A connection outlives many batchers (each wake, reload
   * or new version makes one), so a batcher takes its listeners off once it has stopped and drained.
   */
  #watch(signal: AbortSignal, entry: Entry): void {
    let waiting = this.#waiting.get(signal);
    if (!waiting) {
      const entries = new Set<Entry>();
      const batcher = new WeakRef(this);
      waiting = entries;
      this.#waiting.set(signal, entries);
      const listener = () => {
        const alive = batcher.deref();
        if (alive) for (const waiter of [...entries]) alive.#leave(waiter, cancelled());
      };
      signal.addEventListener("abort", listener, { once: true });
      this.#listening(signal, listener);
    }
    waiting.add(entry);
    entry.item.signal = signal;
  }

  /** Waiting requests by the signal they are cancelled by. */
  readonly #waiting = new WeakMap<AbortSignal, Set<Entry>>();
  /** The abort listeners this batcher added, by signal held weakly (a closed connection's signal goes). */
  #listeners: { signal: WeakRef<AbortSignal>; listener: () => void }[] = [];
  /** Length at which `#listeners` is next cleared of signals already collected. */
  #pruneAt = 64;

  #listening(signal: AbortSignal, listener: () => void): void {
    this.#listeners.push({ signal: new WeakRef(signal), listener });
    if (this.#listeners.length < this.#pruneAt) return;
    this.#listeners = this.#listeners.filter((l) => l.signal.deref() !== undefined);
    this.#pruneAt = Math.max(64, 2 * this.#listeners.length);
  }

  #stopListening(): void {
    for (const { signal, listener } of this.#listeners) signal.deref()?.removeEventListener("abort", listener);
    this.#listeners = [];
  }

  /** Takes a request out of the queue with an error (no-op once it left: its result comes as usual). */
  #leave(entry: Entry, error: RuntimeError): void {
    if (!this.#queue.remove(entry)) return;
    this.#detach(entry);
    entry.item.reject(error);
    this.#pump();
    this.#settle();
  }

  /** Clears the timeout timer and the signal registration once the request leaves the queue. */
  #detach(entry: Entry): void {
    const pending = entry.item;
    pending.left = true;
    if (pending.timer !== undefined) this.#options.clock.clearTimeout(pending.timer);
    if (pending.signal) this.#waiting.get(pending.signal)?.delete(entry);
  }

  hasRoom(priority?: number): boolean {
    if (priority !== undefined) return !this.#queue.isFull(this.#queue.levelFor(priority));
    const levels = this.#options.levels?.length ?? 1;
    for (let level = 1; level <= levels; level++) if (!this.#queue.isFull(level)) return true;
    return false;
  }

  inflight(): number {
    return this.#queue.size + this.#running;
  }

  /** Requests waiting: in the queue, or in a formed batch the rate limiter holds back. */
  get queued(): number {
    return this.#queue.size + this.#holding;
  }

  /** Instances serving now (free or busy), after pending removals. */
  get instanceCount(): number {
    return this.#instances - this.#retiring.length;
  }

  /** Adds an instance (autoscaling up); it takes queued work at once. */
  addInstance(instance: ModelInstance): void {
    this.#instances++;
    this.#release(instance);
    this.#pump();
  }

  /**
   * Takes one instance out of service (autoscaling down): a free one at once, else the next one
   * to finish its batch. Resolves with it so the caller can release its session.
   */
  removeInstance(): Promise<ModelInstance> {
    if (this.#instances - this.#retiring.length <= 1) return Promise.reject(new Error("cannot remove the last instance"));
    const free = this.#free.pop();
    if (free) {
      this.#instances--;
      return Promise.resolve(free);
    }
    return new Promise((resolve) => this.#retiring.push(resolve));
  }

  stop(): Promise<void> {
    this.#stopping = true;
    if (this.inflight() === 0) {
      this.#stopListening();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  /** `afterRun`: an instance just came back; its batch's answers are still on their way out. */
  #pump(afterRun = false): void {
    this.#timer.clear();
    if (this.#formingOnTurn) return; // that turn's pump forms the batch
    while (this.#free.length > 0 && this.#queue.size > 0) {
      const leaving = this.#nextBatch();
      if (!leaving) return this.#timer.set(this.#waitUntil, () => this.#pump(), { coarse: this.#waitCoarse });
      if (this.#formsOnTurn(leaving, afterRun)) return;
      const batch = leaving.entries;
      if (this.#waitRows !== undefined) this.#outlook.waited(rowsOf(batch) > this.#waitRows);
      const readyAt = this.#readyAt;
      this.#waitRows = this.#readyAt = undefined;
      const kept = this.#shed(batch, readyAt);
      if (kept.length > 0) this.#dispatch(kept, leaving.reason);
    }
    if (this.#queue.size === 0) this.#waitRows = this.#readyAt = undefined;
  }

  /** Set while a batch waits to be formed on its instance's compute turn (`#formsOnTurn`). */
  #formingOnTurn = false;
  /** Set during the pump on that turn: what leaves, leaves. */
  #onTurn = false;

  /**
   * Whether the batch that would leave now is formed instead on the compute turn of the instance
   * it would take (`ModelInstance.computeTurn`: an event-loop instance whose runs start on a later
   * macrotask). The execution could not start before that turn anyway, so forming it there costs
   * its requests no wait and lets the requests read meanwhile join: 8 closed-loop clients of the
   * bundled mlp formed batches of 6.9 instead of 4.3 (bench/RESULTS.md, "Batches formed on the
   * compute turn"). A batch that is full, has its largest preferred size, or is blocked by a
   * request that cannot join it leaves at once, as before; so does one that nothing more can reach
   * (`arrivals`), unless the instance just came back (`afterRun`): its batch's clients are
   * answered only after this, so "nothing can arrive" is about to stop being true, and on the turn
   * the batcher decides on what it will be then. Deciding at once kept 8 closed-loop clients in two
   * groups of 5 and 3 for good, each paying an execution's fixed cost, where one wait would merge them.
   */
  #formsOnTurn(leaving: Leaving, afterRun: boolean): boolean {
    if (this.#onTurn || leaving.reason === "full" || leaving.reason === "preferred" || leaving.reason === "blocked") return false;
    const turn = this.#free.at(-1)!.computeTurn; // the instance #dispatch takes
    if (!turn || (!afterRun && (leaving.reason === "no_arrivals" || this.#options.arrivals?.mayArrive() === false))) return false;
    this.#formingOnTurn = true;
    turn.call(this.#free.at(-1), () => {
      this.#formingOnTurn = false;
      this.#onTurn = true;
      try {
        this.#pump();
      } finally {
        this.#onTurn = false;
      }
    });
    return true;
  }

  /**
   * With a latency target, rejects (503) the requests of `batch` that would finish past their
   * deadline (the target, or their queue timeout if sooner) and returns the rest. A request that
   * would have met it had the batch left when it first could (`readyAt`) runs: the law chose to
   * hold it, and a hold that ends late (a timer behind a busy event loop) is the batcher's doing,
   * not the overload that shedding answers.
   */
  #shed(batch: Entry[], readyAt: number | undefined): Entry[] {
    const targetMs = this.#options.targetLatencyMs;
    if (!this.#cost || !targetMs || this.#cost.weight === 0) return batch;
    const now = this.#options.clock.now();
    const costMs = this.#cost.predict(rowsOf(batch)) + (this.#turnMs ?? 0);
    const kept: Entry[] = [];
    for (const entry of batch) {
      const timeoutMs = effectiveTimeout(this.#queue.policy(entry.level), entry.item.request.timeoutMs);
      const deadlineMs = timeoutMs > 0 ? Math.min(timeoutMs, targetMs) : targetMs;
      if (!missesDeadline(readyAt ?? now, entry.enqueuedAt, deadlineMs, costMs)) {
        kept.push(entry);
        continue;
      }
      this.#queue.remove(entry);
      this.#detach(entry);
      const waited = (now - entry.enqueuedAt).toFixed(1);
      entry.item.reject(
        new RuntimeError("UNAVAILABLE", `request shed: it waited ${waited} ms and its batch takes about ${costMs.toFixed(1)} ms, past its ${deadlineMs} ms deadline (target_latency_ms or its timeout)`),
      );
    }
    if (kept.length < batch.length) this.#settle();
    return kept;
  }

  /** The entries to dispatch now and why, or undefined to keep waiting for a fuller batch. */
  #nextBatch(): Leaving | undefined {
    const { maxBatchSize, preferredBatchSizes = [], clock } = this.#options;
    const formed = this.#formable();
    const sums: number[] = [];
    for (const e of formed) sums.push((sums.at(-1) ?? 0) + e.item.request.batchSize);
    const rows = sums.at(-1)!;
    if (rows >= maxBatchSize) return { entries: formed, reason: "full" };
    const preferred = preferredBatchSizes.filter((p) => sums.includes(p));
    const best = preferred.length > 0 ? Math.max(...preferred) : undefined;
    const take = (reason: DispatchReason): Leaving => ({ entries: best === undefined ? formed : formed.slice(0, sums.indexOf(best) + 1), reason });
    if (best !== undefined && best === Math.max(...preferredBatchSizes)) return take("preferred");
    const now = clock.now();
    const blocked = formed.length < this.#queue.size; // the next request cannot join: waiting gains nothing
    if (blocked) return take("blocked");
    const oldestAt = formed[0]!.enqueuedAt;
    let until: number;
    if (this.#cost) {
      const delayMs = this.queueDelayMs;
      const targetMs = this.#options.targetLatencyMs!;
      this.#readyAt ??= now;
      if (this.#options.arrivals?.mayArrive() === false) return take("no_arrivals");
      const expectedAt = this.#options.arrivals?.expectedAt?.();
      const decision = planBatch({ now, rows, oldestAt, newestAt: formed.at(-1)!.enqueuedAt, targetMs, capMs: delayMs > 0 ? delayMs : undefined, cost: this.#cost.fit(), turnMs: this.#turnMs, gapMs: this.#outlook.gapMs, expectedAt, latenessMs: expectedAt === undefined ? undefined : this.#timer.latenessMs });
      if (decision.dispatch) return take("law");
      until = decision.untilMs;
      this.#waitCoarse = expectedAt !== undefined;
    } else {
      until = oldestAt + this.queueDelayMs;
      if (this.queueDelayMs <= 0) return take("at_once");
      if (now >= until) return take("delay");
      if (this.#options.arrivals?.mayArrive() === false) return take("no_arrivals");
      this.#waitCoarse = false;
    }
    if (this.#waitRows === undefined) {
      if (!this.#outlook.worthWaiting()) return take("not_paying");
      this.#waitRows = rows;
    }
    this.#waitUntil = until;
    return undefined;
  }

  /** The longest run, in service order, that shares the first entry's shape and fits the limit. */
  #formable(): Entry[] {
    const formed: Entry[] = [];
    let rows = 0;
    for (const entry of this.#queue.ordered()) {
      const { batchSize, shapeKey } = entry.item.request;
      if (formed.length > 0 && (shapeKey !== formed[0]!.item.request.shapeKey || rows + batchSize > this.#options.maxBatchSize)) break;
      formed.push(entry);
      rows += batchSize;
    }
    return formed;
  }

  #dispatch(batch: Entry[], reason: DispatchReason): void {
    const { preserveOrdering } = this.#options;
    for (const entry of batch) {
      this.#queue.remove(entry);
      this.#detach(entry);
    }
    const instance = this.#free.pop()!;
    this.#running++;
    let delivered: () => void = () => {};
    const previous = preserveOrdering ? this.#lastDelivery : undefined;
    if (preserveOrdering) this.#lastDelivery = new Promise((resolve) => (delivered = resolve));
    void this.#execute(instance, batch, reason, previous).finally(delivered);
  }

  async #execute(instance: ModelInstance, batch: Entry[], reason: DispatchReason, previous?: Promise<void>): Promise<void> {
    const { clock, observer, acquire } = this.#options;
    let outcomes: Outcome[];
    let letNextGo = () => {};
    try {
      if (acquire) {
        this.#holding += batch.length;
        letNextGo = await acquire(instance).finally(() => (this.#holding -= batch.length));
      }
      // Queue time ends when the batch may execute: a rate-limiter hold counts as queueing.
      const now = clock.now();
      for (const entry of batch) observer?.dequeued(now - entry.enqueuedAt, now);
      outcomes = await this.#run(instance, batch.map((e) => e.item), reason);
    } finally {
      letNextGo();
      this.#release(instance);
      this.#pump(true);
    }
    if (previous) await previous;
    batch.forEach((entry, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) entry.item.resolve(outcome.value);
      else entry.item.reject(outcome.error);
    });
    this.#running--;
    this.#settle();
  }

  /**
   * Runs the requests as one execution. If it fails and held several requests, each is re-run
   * alone, so only a request whose content broke the batch fails.
   */
  async #run(instance: ModelInstance, items: Pending[], reason: DispatchReason): Promise<Outcome[]> {
    const requests = items.map((i) => i.request);
    try {
      const signals = this.#options.requestSignals ? items.map((i) => i.source?.signal) : undefined;
      return (await this.#runOnce(instance, requests, reason, signals)).map((value) => ({ ok: true, value }));
    } catch (error) {
      const failed = asRuntimeError(error);
      // A call cut off by its deadline says nothing about one request's content: re-running each
      // alone would only wait the deadline out again, once per request.
      if (requests.length === 1 || failed.code === "DEADLINE_EXCEEDED") return requests.map(() => ({ ok: false, error: failed }));
      const outcomes: Outcome[] = [];
      for (const item of items) outcomes.push(...(await this.#run(instance, [item], "retry")));
      return outcomes;
    }
  }

  async #runOnce(instance: ModelInstance, requests: ScheduledRequest[], reason: DispatchReason, signals?: (AbortSignal | undefined)[]): Promise<ScheduledResult[]> {
    const { clock, observer } = this.#options;
    const t0 = clock.now();
    const feeds: ScheduledRequest["feeds"] = {};
    for (const name of Object.keys(requests[0]!.feeds)) feeds[name] = batchOf(requests.map((r) => r.feeds[name]!));
    const t1 = clock.now();
    const wanted = neededOutputs(requests);
    // An event-loop session's run first waits for its turn of the loop: the statistics and the
    // cost model weigh what the execution costs, not that wait.
    let ownMs: number | undefined;
    const computed = (ms: number) => void (ownMs = ms);
    const outputs = await instance.run(feeds, { requestSignals: signals, outputs: wanted, computed });
    const t2 = clock.now();
    const sizes = requests.map((r) => r.batchSize);
    const results = requests.map((): ScheduledResult => ({}));
    for (const [name, tensor] of Object.entries(outputs)) {
      splitBatch(tensor, sizes).forEach((part, i) => (results[i]![name] = part));
    }
    const t3 = clock.now();
    const rows = sizes.reduce((a, b) => a + b, 0);
    const waitMs = ownMs === undefined ? 0 : Math.max(0, t2 - t1 - ownMs);
    if (this.#cost) {
      this.#cost.observe(rows, t3 - t0 - waitMs);
      if (ownMs !== undefined) this.#turnMs = this.#turnMs === undefined ? waitMs : this.#turnMs + (waitMs - this.#turnMs) / 8;
    }
    observer?.executed({ reason, rows, requests: requests.length, inputMs: t1 - t0, inferMs: t2 - t1 - waitMs, waitMs, outputMs: t3 - t2, startMs: t0, instance: this.#instanceId(instance) });
    return results;
  }

  #ids = new WeakMap<ModelInstance, number>();
  #nextId = 1;

  #instanceId(instance: ModelInstance): number {
    let id = this.#ids.get(instance);
    if (id === undefined) this.#ids.set(instance, (id = this.#nextId++));
    return id;
  }

  /** Returns an instance to the free list, or to a pending removeInstance(). */
  #release(instance: ModelInstance): void {
    const retire = this.#retiring.shift();
    if (!retire) return void this.#free.push(instance);
    this.#instances--;
    retire(instance);
  }

  #settle(): void {
    if (!this.#stopping || this.inflight() !== 0) return;
    this.#stopListening();
    for (const resolve of this.#drained.splice(0)) resolve();
  }
}

/** A level's timeout, shortened by the request's own where the level allows overrides. */
function effectiveTimeout(policy: LevelPolicy, requestedMs: number | undefined): number {
  if (!policy.allowTimeoutOverride || !requestedMs || requestedMs <= 0) return policy.defaultTimeoutMs;
  return policy.defaultTimeoutMs > 0 ? Math.min(policy.defaultTimeoutMs, requestedMs) : requestedMs;
}

/** The outputs an execution must fetch: every one if any request needs all, else the union of theirs. */
function neededOutputs(requests: readonly ScheduledRequest[]): readonly string[] | undefined {
  const first = requests[0]!.outputs;
  if (!first) return undefined;
  if (requests.length === 1) return first;
  const union = new Set(first);
  for (let i = 1; i < requests.length; i++) {
    const outputs = requests[i]!.outputs;
    if (!outputs) return undefined;
    for (const name of outputs) union.add(name);
  }
  return [...union];
}

function rowsOf(batch: Entry[]): number {
  let rows = 0;
  for (const entry of batch) rows += entry.item.request.batchSize;
  return rows;
}

function asRuntimeError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  return new RuntimeError("INTERNAL", `inference failed: ${(error as Error)?.message ?? error}`, { cause: error });
}

function cancelled(): RuntimeError {
  return new RuntimeError("CANCELLED", "the request was cancelled before it ran");
}
