import { invalidArg, RuntimeError } from "../core/mod.ts";
import type { ModelSignature, Tensor, WorkerHandle } from "../core/mod.ts";
import type { OrtSessionSettings } from "./_ort-session.ts";
import {
  arenaBytesFor,
  arenaSizeFor,
  CONTROL_BYTES,
  DONE,
  EPOCH,
  FETCH,
  fetchMask,
  INITIAL_ARENA_BYTES,
  MAX_ARENA_BYTES,
  POSTED,
  READY,
  readTensors,
  RUN_ID,
  STATE,
  STATUS,
  STATUS_OK,
  SUBMITTED,
  sharedChannelSupported,
  waitAsync,
  writeTensors,
} from "./_shared-channel.ts";
import { postable, transferables } from "./_worker-protocol.ts";
import { plainTensors } from "../tensor/mod.ts";
import type { WorkerNotice, WorkerReply, WorkerRequest } from "./_worker-protocol.ts";

type Call = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, "id"> : never) : never;
type Reply = WorkerReply & { ok: true };

/** The main thread's half of the shared channel; `busy` while a run owns the arenas. */
interface Channel {
  control: Int32Array;
  inputBytes: Uint8Array;
  output: SharedArrayBuffer;
  busy: boolean;
}

export interface WorkerConnectionOptions {
  /** Hop over shared memory where the runtime supports it (default true); false keeps postMessage only. */
  sharedChannel?: boolean;
  /** Microseconds the worker spins for the next run before it sleeps in Atomics.wait (default 0). */
  spinMicros?: number;
}

/**
 * The main thread's side of one ORT worker: numbered requests, one promise per reply. Runs go over
 * the shared-memory channel when their tensors fit it and over postMessage otherwise. If the worker
 * dies, everything pending fails with INTERNAL and later calls fail at once.
 */
export class WorkerConnection {
  readonly #handle: WorkerHandle;
  readonly #pending = new Map<number, { resolve(reply: Reply): void; reject(error: Error): void }>();
  #next = 1;
  #posted = 0;
  #dead?: string;
  #channel?: Channel;
  /** Input and output names of the loaded model, the channel's name tables; unset while none is loaded. */
  #names?: { inputs: string[]; outputs: string[] };

  constructor(handle: WorkerHandle, options: WorkerConnectionOptions = {}) {
    this.#handle = handle;
    handle.onMessage((message) => {
      const reply = message as WorkerReply;
      const pending = this.#pending.get(reply.id);
      if (!pending) return;
      this.#pending.delete(reply.id);
      if (reply.ok && reply.output && this.#channel) this.#channel.output = reply.output;
      if (reply.ok) pending.resolve(reply);
      else pending.reject(reply.invalid ? invalidArg(reply.error) : new RuntimeError("INTERNAL", reply.error));
    });
    handle.onExit((reason) => {
      this.#dead = reason;
      for (const p of this.#pending.values()) p.reject(this.#stopped());
      this.#pending.clear();
      // Wakes a run waiting on the channel, which then sees the worker is gone.
      if (this.#channel) Atomics.notify(this.#channel.control, STATE);
    });
    if (options.sharedChannel !== false && sharedChannelSupported()) {
      const control = new SharedArrayBuffer(CONTROL_BYTES);
      const input = new SharedArrayBuffer(INITIAL_ARENA_BYTES);
      const output = new SharedArrayBuffer(INITIAL_ARENA_BYTES);
      this.#channel = { control: new Int32Array(control), inputBytes: new Uint8Array(input), output, busy: false };
      this.#post({ op: "channel", control, input, output, spinMicros: options.spinMicros ?? 0 });
    }
  }

  async load(model: Uint8Array, settings: OrtSessionSettings, pkg: "node" | "web" = "node"): Promise<ModelSignature> {
    this.#names = undefined;
    const { signature } = await this.#call({ op: "load", model, settings, package: pkg });
    this.#names = { inputs: signature!.inputs.map((i) => i.name), outputs: signature!.outputs.map((o) => o.name) };
    return signature!;
  }

  /**
   * Runs a batch, fetching `outputs` (all when undefined). Over the channel the feeds are copied
   * and stay the caller's; over postMessage, feeds that own their buffer move to the worker: the
   * caller must not reuse them.
   */
  run(feeds: Record<string, Tensor>, outputs?: readonly string[]): Promise<Record<string, Tensor>> {
    const channel = this.#channel;
    const names = this.#names;
    // A second run while one owns the arenas (the scheduler never does this) takes the general path.
    if (channel && names && !channel.busy && !this.#dead) {
      const bytes = arenaBytesFor(names.inputs, feeds);
      const mask = fetchMask(names.outputs, outputs);
      if (bytes >= 0 && bytes <= MAX_ARENA_BYTES && mask >= 0) return this.#channelRun(channel, names, feeds, bytes, mask);
    }
    const posted = postable(plainTensors(feeds)); // a clone keeps own properties only
    return this.#call(outputs ? { op: "run", feeds: posted, outputs } : { op: "run", feeds: posted }, transferables(posted)).then((r) => r.outputs!);
  }

  /** True until the worker died or was terminated. */
  get alive(): boolean {
    return this.#dead === undefined;
  }

  /** The fastest of `runs` executions of `feeds` in µs, timed in the worker after one untimed run; the feeds are copied. */
  time(feeds: Record<string, Tensor>, runs: number): Promise<number> {
    return this.#call({ op: "time", feeds, runs }).then((r) => r.us!);
  }

  /** Releases the session but keeps the thread, so a later load skips the thread's start-up. */
  async release(): Promise<void> {
    this.#names = undefined;
    if (!this.#dead) await this.#call({ op: "release" });
  }

  /** Releases the session and stops the thread. */
  async close(): Promise<void> {
    this.#names = undefined;
    if (!this.#dead) await this.#call({ op: "release" }).catch(() => undefined);
    this.#dead ??= "terminated";
    await this.#handle.terminate();
  }

  #channelRun(channel: Channel, names: { inputs: string[]; outputs: string[] }, feeds: Record<string, Tensor>, bytes: number, fetch: number): Promise<Record<string, Tensor>> {
    const { control } = channel;
    if (bytes > channel.inputBytes.byteLength) {
      const input = new SharedArrayBuffer(arenaSizeFor(bytes));
      channel.inputBytes = new Uint8Array(input);
      this.#post({ op: "channel", input });
    }
    const id = this.#next++;
    const reply = new Promise<Reply>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    writeTensors(control, channel.inputBytes, names.inputs, feeds);
    control[RUN_ID] = id;
    control[FETCH] = fetch;
    channel.busy = true;
    Atomics.store(control, STATE, SUBMITTED);
    this.#wake(control);
    void this.#collect(channel, names.outputs, id, reply);
    return reply.then((r) => r.outputs!);
  }

  /** Waits for the worker to finish run `id` and settles it from the output arena (or leaves it to the reply message). */
  async #collect(channel: Channel, outputNames: string[], id: number, reply: Promise<Reply>): Promise<void> {
    const { control } = channel;
    while (Atomics.load(control, STATE) === SUBMITTED && !this.#dead) {
      const wait = waitAsync!(control, STATE, SUBMITTED);
      if (wait.async) await wait.value;
    }
    if (this.#dead || Atomics.load(control, STATE) !== DONE) return;
    const byArena = control[STATUS] === STATUS_OK;
    const outputs = byArena ? readTensors(control, channel.output, outputNames, true) : undefined;
    Atomics.store(control, STATE, READY);
    const pending = this.#pending.get(id);
    if (outputs && pending) {
      this.#pending.delete(id);
      pending.resolve({ id, ok: true, outputs });
    }
    // An answer by message may bring a new output arena: the arenas stay owned until it came.
    if (!byArena) await reply.catch(() => undefined);
    channel.busy = false;
  }

  #call(call: Call, transfer?: ArrayBuffer[]): Promise<Reply> {
    if (this.#dead) return Promise.reject(this.#stopped());
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#post({ ...call, id }, transfer);
    });
  }

  /**
   * Every message is counted in the control block, so a worker waiting on the channel leaves to read
   * it. Counted before it is posted: a worker that read it before the count moved would see more
   * messages read than posted, and one that compared for inequality left the channel for a
   * message already handled, then slept with a run submitted (a hang, about 1 load in 10).
   */
  #post(message: WorkerRequest | WorkerNotice, transfer?: ArrayBuffer[]): void {
    this.#posted++;
    if (this.#channel) Atomics.store(this.#channel.control, POSTED, this.#posted);
    this.#handle.postMessage(message, transfer);
    if (this.#channel) this.#wake(this.#channel.control);
  }

  #wake(control: Int32Array): void {
    Atomics.add(control, EPOCH, 1);
    Atomics.notify(control, EPOCH);
  }

  #stopped(): RuntimeError {
    return new RuntimeError("INTERNAL", `onnxruntime worker stopped: ${this.#dead}`);
  }
}
