import type { Accelerator } from "../config/function-config.ts";
import type { ModelSignature, Tensor } from "../core/mod.ts";

/** The thread a session computes on. */
export type ExecutionThread = "main" | "worker";

/** Options a backend receives when it creates one session (one model instance). */
export interface LoadOptions {
  /** Requested accelerator; the backend falls back (and says why) when it cannot honour it. */
  accelerator: Accelerator;
  /** GPU to place the session on (instance_group.gpus), for GPU accelerators. */
  deviceId?: number;
  /** onnxruntime's provider options by provider ("tensorrt", "cuda"), under onnxruntime's keys. */
  providerOptions?: Record<string, Record<string, string>>;
  intraOpThreads?: number;
  interOpThreads?: number;
  /** Triton's ORT graph level: 0 = all, -1 = basic, 1 = extended, 2 = none. */
  graphLevel?: number;
  /** Let idle intra-op threads spin (true), never (false); unset: the backend's default (onnxruntime on the CPU: a short spin). */
  allowSpinning?: boolean;
  /** Backends without a model file (identity) take their signature from the config. */
  signature?: ModelSignature;
  /**
   * Where the session computes: `main` in this thread (no hop, but it blocks the event loop while it
   * runs), `worker` in a worker thread. Unset: a worker where the backend has them. Backends that
   * have no choice ignore it and say where they ran in `Session.executionThread`.
   */
  executionThread?: ExecutionThread;
  /**
   * A file path where the backend writes the model in a form that loads faster here (ORT format,
   * optimised for this CPU), for a session made only for that: the load fails when the form cannot be
   * written. The caller reads the file back if it exists. Backends without such a form ignore it.
   */
  saveOptimizedTo?: string;
  /**
   * For a model in that form: use its weights where they lie in `model` instead of copying them
   * out (no copy, no page faults for one at a wake); `model` must then stay unchanged while the
   * session lives. Loads of other forms, and backends without one, ignore it.
   */
  weightsInPlace?: boolean;
  /**
   * With `weightsInPlace`, for a session on the event loop: a wake answers first from a session made
   * without prepacking (at once, without new memory) and builds the prepacked one behind it, which
   * takes over after the first run. The first answers may differ from later ones in the last bits of
   * their floats (other kernels). Other loads ignore it.
   */
  wakeUnpacked?: boolean;
  log?: { info(message: string): void; warn(message: string): void };
  /**
   * The external data files the model names, read from beside it, by the name the model gives
   * (`location`): the backend reads no file itself (repository/read-model-file.ts, readExternalData).
   */
  externalData?: readonly { path: string; data: Uint8Array }[];
  /** The model file as a load's errors name it (relative to the repository: `simple/1/model.onnx`). */
  modelFile?: string;
}

/**
 * Turns model bytes into runnable sessions. The lifecycle layer calls `load` once per instance;
 * backends never see requests, only feeds.
 */
export interface Backend {
  readonly name: string;
  load(model: Uint8Array, options: LoadOptions): Promise<Session>;
  /** True where a load's `executionThread: worker` is honoured (the backend has worker threads). */
  readonly workerThreads?: boolean;
  /**
   * Throws an INVALID_ARG RuntimeError when this backend would not represent the tensor
   * faithfully (e.g. NUL inside a string). Called per request before batching, so one bad request
   * never fails a batch it would have shared.
   */
  checkInput?(name: string, tensor: Tensor): void;
  /** Frees what the backend holds beyond its sessions (idle worker threads). */
  close?(): Promise<void>;
}

/** What one execution asks of a session besides its feeds (the scheduler's RunOptions, by shape). */
export interface SessionRunOptions {
  signal?: AbortSignal;
  requestSignals?: readonly (AbortSignal | undefined)[];
  outputs?: readonly string[];
  /** See `RunOptions.computed` (scheduler). */
  computed?: (ms: number) => void;
}

/** One executable copy of a model. Runs one batch at a time; the scheduler guarantees that. */
export interface Session {
  readonly signature: ModelSignature;
  /** Execution provider actually in use ("cpu", "cuda"…). */
  readonly provider: string;
  /** Why the provider differs from the one requested, when it does. */
  readonly fallbackReason?: string;
  /** Provider options the function asked for that the provider in use did not receive, and why. */
  readonly optionsNotApplied?: string;
  /**
   * False once the thread that holds the session has died (not after `release`). Undefined for
   * sessions that cannot die on their own (in this thread). The lifecycle replaces a dead one.
   */
  readonly alive?: boolean;
  /** Where it computes, for backends that can place a session either way. */
  readonly executionThread?: ExecutionThread;
  /**
   * `requestSignals`: each request's own signal, in batch order, when the scheduler hands them over
   * (handler functions). `outputs`: the ones to fetch, where the batch needs fewer than all; a
   * backend that cannot choose returns all of them.
   */
  run(feeds: Record<string, Tensor>, options?: SessionRunOptions): Promise<Record<string, Tensor>>;
  /** See `ModelInstance.computeTurn` (scheduler): where it computes on a later turn of the event loop. */
  computeTurn?(fn: () => void): void;
  /**
   * The fastest of `runs` executions of `feeds`, in µs, timed on the thread that computes (after one
   * untimed run): the model's own cost, not what else the server was doing, as `execution_thread:
   * auto` reads it at load. On the event loop that holds only while nothing else runs there (a
   * server's start); elsewhere a worker's.
   */
  time?(feeds: Record<string, Tensor>, options: { runs: number }): Promise<number>;
  release(): Promise<void>;
}

/** `session` with its provider and fallback reason, `alive` still read live (a spread would freeze it). */
export function describedSession(session: Omit<Session, "provider" | "fallbackReason">, provider: string, fallbackReason?: string): Session {
  return {
    signature: session.signature,
    provider,
    fallbackReason,
    executionThread: session.executionThread,
    get alive() {
      return session.alive;
    },
    run: (feeds, options) => session.run(feeds, options),
    ...(session.computeTurn && { computeTurn: session.computeTurn.bind(session) }),
    ...(session.time && { time: session.time.bind(session) }),
    release: () => session.release(),
  };
}
