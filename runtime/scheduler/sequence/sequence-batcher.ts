// Over 400 lines: the sequences, their slots, the backlog and the idle timer change together on every
// request and execution, as one state machine; the decisions are sequence-plan.ts's, the tensors sequence-tensors.ts's.
import { Drain } from "../queue/drain.ts";
import { InstancePool } from "../queue/instance-pool.ts";
import { invalidArg, RuntimeError } from "../../core/mod.ts";
import type { Clock, Tensor } from "../../core/mod.ts";
import { concatBatch, copyTensor, splitBatch } from "../../tensor/mod.ts";
import type { SchedulerObserver, SequenceEvent } from "../scheduler-observer.ts";
import type { Arrivals, InstanceScheduler, ModelInstance, ScaledInstances, ScheduledRequest, ScheduledResult } from "../scheduler.ts";
import { SignalWatch } from "../queue/signal-watch.ts";
import { planSequences } from "./sequence-plan.ts";
import type { PlannedSequence, SequencePolicy } from "./sequence-plan.ts";
import { controlTensor, gatherAlong, initialState, scatterAlong } from "./sequence-tensors.ts";
import type { ControlSpec, RowControl, StateSpec } from "./sequence-tensors.ts";

export interface SequenceBatcherOptions {
  /** The function's name, for messages. */
  name: string;
  instances: readonly ModelInstance[];
  /**
   * `direct`: a sequence holds one of maxBatchSize × instances slots for its life, others wait in
   * the backlog; `oldest`: up to `candidates` live sequences are candidates (default all), others wait.
   */
  strategy: "direct" | "oldest";
  candidates?: number;
  policy: SequencePolicy;
  /** Sequences live at once, backlog included; a START beyond it is refused (503). */
  maxSequences: number;
  /** Answers leave in dispatch order even when instances finish out of order (oldest's preserve_ordering). */
  preserveOrdering?: boolean;
  /** A sequence without a request for this long is released (Triton's max_sequence_idle_microseconds). */
  idleMs: number;
  states: readonly StateSpec[];
  controls: readonly ControlSpec[];
  /** Inputs every execution takes as they are, shared by its rows (Silero's sample rate). */
  shared: Readonly<Record<string, Tensor>>;
  clock: Clock;
  observer?: SchedulerObserver;
  /** What the server knows of requests still to come: when none can arrive, a partial execution waits for nothing. */
  arrivals?: Arrivals;
  /** Told when a sequence starts, ends, is released for idleness, or is cut off by a new START. */
  onSequence?: (event: SequenceEvent, id: number | string) => void;
}

interface Pending {
  request: ScheduledRequest;
  control: RowControl;
  since: number;
  resolve(result: ScheduledResult): void;
  reject(error: unknown): void;
  /** Its sequence, and the signal it is watched under while it waits. */
  sequence: Sequence;
  signal?: AbortSignal;
}

interface Sequence {
  id: number | string;
  key: string;
  state: Record<string, Tensor>;
  queue: Pending[];
  busy: boolean;
  placed: boolean;
  lastActive: number;
  /** Its END request has been queued: no request may follow it. */
  ending: boolean;
}

/**
 * Characters of a string sequence id: each live sequence keeps its id, so an unbounded one would let
 * max_sequences clients pin gigabytes (a 1 MB id was accepted before this bound).
 */
export const MAX_SEQUENCE_ID_CHARS = 1024;

/** Ids released lately, so a late request learns why its sequence is gone. */
const REMEMBERED = 1024;

/**
 * Triton's sequence batcher with implicit state. Each request names its sequence
 * (`parameters.sequence_id`, an unsigned integer or a string) and may start or end it
 * (`sequence_start`, `sequence_end`); a sequence's requests run one at a time, in order, each on
 * the state the previous one left (kept here, never sent by the client), and requests of different
 * sequences share executions — never two of one sequence. The planner (sequence-plan.ts) picks
 * each execution; this class keeps the sequences, the slots, the backlog and the idle timer.
 */
export class SequenceBatcher implements InstanceScheduler {
  readonly #o: SequenceBatcherOptions;
  readonly #sequences = new Map<string, Sequence>();
  /** Sequences waiting for a slot (direct), in arrival order. */
  readonly #backlog: Sequence[] = [];
  readonly #released: string[] = [];
  readonly #watch = new SignalWatch<Pending>((pending) => this.#cancel(pending));
  readonly #pool: InstancePool<ModelInstance>;
  #running = 0;
  #queued = 0;
  #timer?: unknown;
  #timerAt = Infinity;
  #idleTimer?: unknown;
  readonly #drain = new Drain();
  /** Resolves once the most recently dispatched execution has answered (preserve_ordering). */
  #lastDelivery: Promise<void> = Promise.resolve();

  constructor(options: SequenceBatcherOptions) {
    this.#o = options;
    this.#pool = new InstancePool(options.instances, () => this.#pump());
  }

  get queued(): number {
    return this.#queued;
  }

  /** Its instances, as autoscaling grows and shrinks them. */
  get pool(): ScaledInstances<ModelInstance> {
    return this.#pool;
  }

  /** Sequences live now (placed or in the backlog). */
  get sequences(): number {
    return this.#sequences.size;
  }

  inflight(): number {
    return this.#queued + this.#running;
  }

  hasRoom(): boolean {
    return !this.#drain.stopping;
  }

  enqueue(request: ScheduledRequest, options: { signal?: AbortSignal } = {}): Promise<ScheduledResult> {
    try {
      return this.#admit(request, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #admit(request: ScheduledRequest, options: { signal?: AbortSignal }): Promise<ScheduledResult> {
    if (this.#drain.stopping) throw new RuntimeError("UNAVAILABLE", `model '${this.#o.name}' is being unloaded`);
    const { id, start, end } = sequenceParameters(request, this.#o.name);
    if (request.batchSize !== 1) throw invalidArg(`a request of sequence ${show(id)} to model '${this.#o.name}' must have batch size 1, not ${request.batchSize}`);
    const key = typeof id === "number" ? `n${id}` : `s${id}`;
    let sequence = this.#sequences.get(key);
    if (start) {
      if (sequence) this.#cutOff(sequence, `sequence ${show(id)} was started again`);
      if (this.#sequences.size >= this.#o.maxSequences) {
        throw new RuntimeError("UNAVAILABLE", `model '${this.#o.name}' holds ${this.#o.maxSequences} live sequences (max_sequences); end one or wait for one to go idle`);
      }
      sequence = this.#open(id, key);
    } else if (!sequence || sequence.ending) {
      const why = this.#released.includes(key) ? `it was released after ${this.#o.idleMs / 1000} s without a request` : sequence ? "its last request (sequence_end) has been sent" : "no such sequence is live: never started, ended by its sequence_end, or ended by an unload or reload of the function";
      throw invalidArg(`inference request for sequence ${show(id)} to model '${this.#o.name}' must start it with sequence_start: true (${why})`);
    }
    if (end) sequence.ending = true;
    const live = sequence;
    return new Promise<ScheduledResult>((resolve, reject) => {
      const pending: Pending = { request, control: { start, end, id }, since: this.#o.clock.now(), resolve, reject, sequence: live };
      live.queue.push(pending);
      this.#queued++;
      if (options.signal) {
        // One listener per signal (a connection's, shared by its requests), not one per request.
        pending.signal = options.signal;
        this.#watch.watch(options.signal, pending);
      }
      this.#pump();
    });
  }

  /** A waiting request whose client went away leaves the queue. */
  #cancel(pending: Pending): void {
    const at = pending.sequence.queue.indexOf(pending);
    if (at < 0) return; // executing, or done
    pending.sequence.queue.splice(at, 1);
    this.#queued--;
    pending.reject(new RuntimeError("CANCELLED", "the client went away before the request ran"));
  }

  /** A request leaves the queue (to run, or refused): no longer watched. */
  #unwatch(pending: Pending): void {
    if (pending.signal) this.#watch.forget(pending.signal, pending);
  }

  async stop(): Promise<void> {
    this.#o.clock.clearTimeout(this.#idleTimer);
    // Placed sequences finish what they queued; those still waiting for a slot never get one now.
    for (const s of this.#backlog.splice(0)) {
      for (const p of s.queue.splice(0)) {
        this.#queued--;
        this.#unwatch(p);
        p.reject(new RuntimeError("UNAVAILABLE", `model '${this.#o.name}' is being unloaded; sequence ${show(s.id)} had not started running`));
      }
      this.#sequences.delete(s.key);
    }
    // Nothing between here and the loop above yields: no request came in meanwhile.
    await this.#drain.stop(this.inflight());
    this.#o.clock.clearTimeout(this.#timer);
    for (const s of [...this.#sequences.values()]) this.#close(s);
    this.#watch.close();
  }

  #open(id: number | string, key: string): Sequence {
    const state: Record<string, Tensor> = {};
    for (const spec of this.#o.states) state[spec.input] = initialState(spec);
    const placed = this.#placedCount() < this.#slots();
    const sequence: Sequence = { id, key, state, queue: [], busy: false, placed, lastActive: this.#o.clock.now(), ending: false };
    this.#sequences.set(key, sequence);
    if (!placed) this.#backlog.push(sequence);
    const at = this.#released.indexOf(key);
    if (at >= 0) this.#released.splice(at, 1);
    this.#event("start", id);
    this.#watchIdle();
    return sequence;
  }

  #event(event: SequenceEvent, id: number | string): void {
    this.#o.observer?.sequence?.(event);
    this.#o.onSequence?.(event, id);
  }

  #slots(): number {
    return this.#o.strategy === "oldest" ? (this.#o.candidates ?? Infinity) : this.#o.policy.maxBatchSize * this.#pool.total;
  }

  #placedCount(): number {
    let n = 0;
    for (const s of this.#sequences.values()) if (s.placed) n++;
    return n;
  }

  /** A sequence leaves: its slot goes to the oldest backlog sequence. */
  #close(sequence: Sequence): void {
    if (this.#sequences.get(sequence.key) !== sequence) return;
    this.#sequences.delete(sequence.key);
    const waiting = this.#backlog.indexOf(sequence);
    if (waiting >= 0) this.#backlog.splice(waiting, 1);
    if (sequence.placed) {
      const next = this.#backlog.shift();
      if (next) next.placed = true;
    }
  }

  /** A new START on a live id: the old sequence ends, and whatever of it is still queued is refused. */
  #cutOff(sequence: Sequence, why: string): void {
    for (const p of sequence.queue.splice(0)) {
      this.#queued--;
      this.#unwatch(p);
      p.reject(invalidArg(`${why} before this request ran`));
    }
    this.#close(sequence);
    this.#event("restart", sequence.id);
  }

  #pump(): void {
    while (this.#pool.hasFree) {
      const decision = planSequences(this.#planned(), this.#o.policy, this.#o.clock.now());
      if ("idle" in decision) break;
      let run: string[];
      if ("waitUntil" in decision) {
        // Every client's connection carries a request already: no frame can join by waiting.
        if (this.#o.arrivals?.mayArrive() !== false) {
          this.#wake(decision.waitUntil);
          break;
        }
        run = decision.partial;
      } else run = decision.run;
      void this.#execute(this.#pool.take()!, run.map((key) => this.#sequences.get(key)!));
    }
    this.#drain.settled(this.inflight());
  }

  *#planned(): Iterable<PlannedSequence> {
    for (const s of this.#sequences.values()) {
      const head = s.queue[0];
      yield { key: s.key, placed: s.placed, busy: s.busy, headSince: head?.since, headShape: head?.request.shapeKey };
    }
  }

  #wake(at: number): void {
    if (this.#timer !== undefined && at >= this.#timerAt) return;
    this.#o.clock.clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#pump();
    }, Math.max(0, at - this.#o.clock.now()));
  }

  async #execute(instance: ModelInstance, batch: Sequence[]): Promise<void> {
    const { clock, observer } = this.#o;
    const taken = batch.map((s) => {
      s.busy = true;
      this.#queued--;
      const pending = s.queue.shift()!;
      this.#unwatch(pending);
      return pending;
    });
    this.#running += taken.length;
    // preserve_ordering: answers leave in dispatch order, after every earlier execution's.
    const prior = this.#lastDelivery;
    let delivered = () => {};
    if (this.#o.preserveOrdering) this.#lastDelivery = new Promise<void>((resolve) => (delivered = resolve));
    const started = clock.now();
    for (const p of taken) observer?.dequeued(started - p.since, started);
    // Fresh buffers for what outlives the run (shared inputs, a lone sequence's state): an instance
    // on a worker thread takes ownership of the buffers it is sent.
    const feeds: Record<string, Tensor> = {};
    for (const [name, t] of Object.entries(this.#o.shared)) feeds[name] = copyTensor(t);
    for (const name of Object.keys(taken[0]!.request.feeds)) feeds[name] = concatBatch(taken.map((p) => p.request.feeds[name]!));
    for (const spec of this.#o.states) feeds[spec.input] = batch.length === 1 ? copyTensor(batch[0]!.state[spec.input]!) : gatherAlong(batch.map((s) => s.state[spec.input]!), spec.batchAxis);
    for (const spec of this.#o.controls) feeds[spec.name] = controlTensor(spec, taken.map((p) => p.control));
    const wanted = taken.some((p) => !p.request.outputs) ? undefined : [...new Set(taken.flatMap((p) => p.request.outputs!))];
    const outputs = wanted && [...wanted, ...this.#o.states.map((s) => s.output)];
    const inputDone = clock.now();
    try {
      const result = await instance.run(feeds, outputs ? { outputs } : undefined);
      const ran = clock.now();
      for (const spec of this.#o.states) {
        const produced = result[spec.output];
        if (!produced) throw new Error(`model '${this.#o.name}' produced no state output '${spec.output}'`);
        scatterAlong(produced, spec.batchAxis).forEach((next, i) => (batch[i]!.state[spec.input] = next));
      }
      const stateOutputs = new Set(this.#o.states.map((s) => s.output));
      const per: ScheduledResult[] = taken.map(() => ({}));
      for (const [name, tensor] of Object.entries(result)) {
        if (stateOutputs.has(name)) continue;
        splitBatch(tensor, taken.map(() => 1)).forEach((part, i) => (per[i]![name] = part));
      }
      observer?.executed({ rows: taken.length, requests: taken.length, inputMs: inputDone - started, inferMs: ran - inputDone, waitMs: 0, outputMs: clock.now() - ran, startMs: started, instance: 1 });
      if (this.#o.preserveOrdering) await prior;
      taken.forEach((p, i) => p.resolve(per[i]!));
    } catch (error) {
      // The states stay as they were: a failed request leaves its sequence where it stood.
      if (this.#o.preserveOrdering) await prior;
      for (const p of taken) p.reject(error);
    } finally {
      delivered();
      this.#running -= taken.length;
      const now = clock.now();
      batch.forEach((s, i) => {
        s.busy = false;
        s.lastActive = now;
        if (taken[i]!.control.end) {
          this.#close(s);
          this.#event("end", s.id);
        }
      });
      this.#pool.release(instance);
      this.#pump();
    }
  }

  /** Looks for idle sequences each idle period, while any is live. */
  #watchIdle(): void {
    if (this.#idleTimer !== undefined || this.#drain.stopping) return;
    this.#idleTimer = this.#o.clock.setTimeout(() => {
      this.#idleTimer = undefined;
      const now = this.#o.clock.now();
      for (const s of [...this.#sequences.values()]) {
        if (s.busy || s.queue.length > 0 || now - s.lastActive < this.#o.idleMs) continue;
        this.#close(s);
        this.#released.push(s.key);
        if (this.#released.length > REMEMBERED) this.#released.shift();
        this.#event("idle", s.id);
      }
      if (this.#sequences.size > 0) this.#watchIdle();
      this.#pump();
    }, Math.max(1, this.#o.idleMs / 4));
  }
}

/** A request's sequence id and flags, checked (Triton's parameters). */
function sequenceParameters(request: ScheduledRequest, model: string): { id: number | string; start: boolean; end: boolean } {
  const p = request.parameters ?? {};
  const id = p.sequence_id;
  if (id === undefined || id === 0 || id === "") {
    throw invalidArg(`inference request to model '${model}' must specify a non-zero or non-empty sequence_id (a sequence model: its requests belong to sequences)`);
  }
  if (typeof id === "number" ? !Number.isSafeInteger(id) || id < 0 : typeof id !== "string") {
    throw invalidArg(`sequence_id must be an unsigned integer or a string, got ${JSON.stringify(id)}`);
  }
  if (typeof id === "string" && id.length > MAX_SEQUENCE_ID_CHARS) {
    throw invalidArg(`sequence_id is a string of ${id.length} characters; at most ${MAX_SEQUENCE_ID_CHARS}`);
  }
  const flag = (name: string) => {
    const v = p[name] ?? false;
    if (typeof v !== "boolean") throw invalidArg(`${name} must be true or false, got ${JSON.stringify(v)}`);
    return v;
  };
  return { id: id as number | string, start: flag("sequence_start"), end: flag("sequence_end") };
}

function show(id: number | string): string {
  return typeof id === "number" ? String(id) : JSON.stringify(id.length > 64 ? `${id.slice(0, 64)}…` : id);
}
