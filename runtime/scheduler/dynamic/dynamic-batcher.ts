// Over 400 lines: admission, the pump (timers, the compute-turn forming) and instance management are
// one state machine; the decisions are in batch-planner.ts, executions in batch-executor.ts.
import { Drain } from "../queue/drain.ts";
import { InstancePool } from "../queue/instance-pool.ts";
import { RuntimeError } from "../../core/mod.ts";
import type { Clock } from "../../core/mod.ts";
import { effectiveTimeout, PriorityQueue } from "../queue/priority-queue.ts";
import type { LevelPolicy, QueueEntry } from "../queue/priority-queue.ts";
import { SignalWatch } from "../queue/signal-watch.ts";
import type { DispatchReason, SchedulerObserver } from "../scheduler-observer.ts";
import type { Arrivals, InstanceScheduler, ModelInstance, ScaledInstances, ScheduledRequest, ScheduledResult } from "../scheduler.ts";
import { ArrivalOutlook } from "./arrival-outlook.ts";
import { BatchExecutor } from "./batch-executor.ts";
import type { Outcome } from "./batch-executor.ts";
import { formBatch, missedDeadlines, planDispatch } from "./batch-planner.ts";
import type { AdaptiveInputs, DispatchState, PlannedRequest } from "./batch-planner.ts";
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
  /** The signal it is registered under while it waits (see `#watch`). */
  signal?: AbortSignal;
  /** Set once it left the queue (dispatched, shed, timed out, cancelled). */
  left?: boolean;
}

/** A queued request: the queue's entry, with what the planner reads of it (`PlannedRequest`). */
type Entry = QueueEntry<Pending> & PlannedRequest;
/** A batch that leaves now, and why. */
type Leaving = { entries: Entry[]; reason: DispatchReason };

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
  readonly #pool: InstancePool<ModelInstance>;
  /** Fitted execution cost; present only with a latency target. */
  readonly #cost?: CostModel;
  readonly #executor: BatchExecutor;
  readonly #watch = new SignalWatch<Entry>((entry) => this.#leave(entry, cancelled()));
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
   * polled, 5670 not; docs/notes/2026-12-scheduling-studies.md, "Batches formed on the compute turn").
   */
  #waitCoarse = false;
  /** When the batch being formed could first have left (an instance free, a request queued); undefined between batches. */
  #readyAt?: number;
  #running = 0;
  readonly #drain = new Drain();
  /** Resolves when the most recently dispatched batch has delivered (preserve_ordering). */
  #lastDelivery: Promise<void> = Promise.resolve();
  /** Requests in formed batches waiting for the rate limiter (still pending, as in Triton). */
  #holding = 0;

  constructor(options: DynamicBatcherOptions) {
    this.#options = options;
    this.#pool = new InstancePool(options.instances, () => this.#pump());
    this.#queue = new PriorityQueue(options.levels ?? [UNLIMITED], options.defaultLevel ?? 1);
    this.#timer = new PreciseTimer(options.clock);
    if (options.targetLatencyMs) this.#cost = new CostModel();
    this.#executor = new BatchExecutor({ clock: options.clock, observer: options.observer, cost: this.#cost, requestSignals: options.requestSignals });
    this.#state = {
      now: 0,
      formed: [],
      queued: 0,
      maxBatchSize: options.maxBatchSize,
      preferredBatchSizes: options.preferredBatchSizes ?? [],
      queueDelayMs: options.maxQueueDelayMs ?? 0,
      adaptive: this.#cost ? () => this.#adaptiveInputs() : undefined,
      mayArrive: () => options.arrivals?.mayArrive(),
      waiting: false,
      worthWaiting: () => this.#outlook.worthWaiting(),
    };
  }

  /** The planner's input, refilled for each decision (one object, not one per request). */
  readonly #state: DispatchState;

  /** The fixed queue delay (without a latency target). */
  get queueDelayMs(): number {
    return this.#options.maxQueueDelayMs ?? 0;
  }

  /** The fitted execution cost `a·n + b` (ms) where a latency target is set. */
  get cost(): { a: number; b: number } | undefined {
    return this.#cost?.fit();
  }

  enqueue(request: ScheduledRequest, options: { signal?: AbortSignal } = {}): Promise<ScheduledResult> {
    if (this.#drain.stopping) return Promise.reject(new RuntimeError("UNAVAILABLE", "the model is being unloaded"));
    const level = this.#queue.levelFor(request.priority);
    if (this.#queue.isFull(level)) {
      return Promise.reject(new RuntimeError("UNAVAILABLE", `Exceeds maximum queue size (${this.#queue.policy(level).maxQueueSize} at priority level ${level})`));
    }
    const { clock } = this.#options;
    return new Promise<ScheduledResult>((resolve, reject) => {
      const pending: Pending = { request, source: this.#options.requestSignals ? options : undefined, resolve, reject };
      const entry: Entry = { item: pending, level, enqueuedAt: clock.now(), delayed: false, batchSize: request.batchSize, shapeKey: request.shapeKey };
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
      this.#watch.watch(signal, entry);
      pending.signal = signal;
    });
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
    if (pending.signal) this.#watch.forget(pending.signal, entry);
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

  /** Its instances, as autoscaling grows and shrinks them. */
  get pool(): ScaledInstances<ModelInstance> {
    return this.#pool;
  }

  async stop(): Promise<void> {
    await this.#drain.stop(this.inflight());
    this.#watch.close();
  }

  /** `afterRun`: an instance just came back; its batch's answers are still on their way out. */
  #pump(afterRun = false): void {
    this.#timer.clear();
    if (this.#formingOnTurn) return; // that turn's pump forms the batch
    while (this.#pool.hasFree && this.#queue.size > 0) {
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
   * bundled mlp formed batches of 6.9 instead of 4.3 (docs/notes/2026-12-scheduling-studies.md, "Batches formed on the
   * compute turn"). A batch that is full, has its largest preferred size, or is blocked by a
   * request that cannot join it leaves at once, as before; so does one that nothing more can reach
   * (`arrivals`), unless the instance just came back (`afterRun`): its batch's clients are
   * answered only after this, so "nothing can arrive" is about to stop being true, and on the turn
   * the batcher decides on what it will be then. Deciding at once kept 8 closed-loop clients in two
   * groups of 5 and 3 for good, each paying an execution's fixed cost, where one wait would merge them.
   */
  #formsOnTurn(leaving: Leaving, afterRun: boolean): boolean {
    if (this.#onTurn || leaving.reason === "full" || leaving.reason === "preferred" || leaving.reason === "blocked") return false;
    const instance = this.#pool.peek()!; // the instance #dispatch takes
    const turn = instance.computeTurn;
    if (!turn || (!afterRun && (leaving.reason === "no_arrivals" || this.#options.arrivals?.mayArrive() === false))) return false;
    this.#formingOnTurn = true;
    turn.call(instance, () => {
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
    const costMs = this.#cost.predict(rowsOf(batch)) + (this.#executor.turnMs ?? 0);
    const missed = missedDeadlines(batch, { now, readyAt, costMs, targetMs, timeoutMs: (i) => effectiveTimeout(this.#queue.policy(batch[i]!.level), batch[i]!.item.request.timeoutMs) });
    const kept: Entry[] = [];
    batch.forEach((entry, i) => {
      if (!missed[i]) return void kept.push(entry);
      this.#queue.remove(entry);
      this.#detach(entry);
      const deadlineMs = Math.min(targetMs, effectiveTimeout(this.#queue.policy(entry.level), entry.item.request.timeoutMs) || targetMs);
      const waited = (now - entry.enqueuedAt).toFixed(1);
      entry.item.reject(
        new RuntimeError("UNAVAILABLE", `request shed: it waited ${waited} ms and its batch takes about ${costMs.toFixed(1)} ms, past its ${deadlineMs} ms deadline (target_latency_ms or its timeout)`),
      );
    });
    if (kept.length < batch.length) this.#settle();
    return kept;
  }

  /** The entries to dispatch now and why (batch-planner.ts decides), or undefined to keep waiting for a fuller batch. */
  #nextBatch(): Leaving | undefined {
    const state = this.#state;
    const formed = formBatch(this.#queue.ordered() as Iterable<Entry>, this.#options.maxBatchSize); // every entry is pushed as an Entry
    state.now = this.#options.clock.now();
    state.formed = formed;
    state.queued = this.#queue.size;
    state.waiting = this.#waitRows !== undefined;
    const plan = planDispatch(state);
    // With a latency target, the batch could first have left once it got past the rules that send it at once.
    if (this.#cost && (!plan.dispatch || (plan.reason !== "full" && plan.reason !== "preferred" && plan.reason !== "blocked"))) this.#readyAt ??= state.now;
    state.formed = [];
    if (plan.dispatch) return { entries: plan.count === formed.length ? formed : formed.slice(0, plan.count), reason: plan.reason };
    if (this.#waitRows === undefined) this.#waitRows = rowsOf(formed);
    this.#waitUntil = plan.untilMs;
    this.#waitCoarse = plan.coarse;
    return undefined;
  }

  /** What the adaptive law weighs now. */
  #adaptiveInputs(): AdaptiveInputs {
    const expectedAt = this.#options.arrivals?.expectedAt?.();
    return {
      targetMs: this.#options.targetLatencyMs!,
      cost: this.#cost!.fit(),
      turnMs: this.#executor.turnMs,
      gapMs: this.#outlook.gapMs,
      expectedAt,
      latenessMs: expectedAt === undefined ? undefined : this.#timer.latenessMs,
    };
  }

  #dispatch(batch: Entry[], reason: DispatchReason): void {
    const { preserveOrdering } = this.#options;
    for (const entry of batch) {
      this.#queue.remove(entry);
      this.#detach(entry);
    }
    const instance = this.#pool.take()!;
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
      outcomes = await this.#executor.run(instance, batch.map((e) => e.item), reason);
    } finally {
      letNextGo();
      this.#pool.release(instance);
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

  #settle(): void {
    this.#drain.settled(this.inflight());
  }
}

function rowsOf(batch: Entry[]): number {
  let rows = 0;
  for (const entry of batch) rows += entry.item.request.batchSize;
  return rows;
}

function cancelled(): RuntimeError {
  return new RuntimeError("CANCELLED", "the request was cancelled before it ran");
}
