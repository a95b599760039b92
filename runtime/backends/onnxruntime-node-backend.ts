import { nextTurn, RuntimeError, systemClock } from "../core/mod.ts";
import type { Clock, ModelSignature, Tensor, WorkerHandle } from "../core/mod.ts";
import type { Backend, LoadOptions, Session, SessionRunOptions } from "./backend.ts";
import { checkOrtInput, errorMessage, isOrtFormat, OrtSession } from "./_ort-session.ts";
import { ortNode } from "./_ort-node.ts";
import type { OrtSessionSettings, PlainView } from "./_ort-session.ts";
import { WorkerPool } from "./_worker-pool.ts";
import { fastestRun } from "./fastest-run.ts";

/** What runs one session: in this thread or in a worker. */
interface Engine {
  signature: ModelSignature;
  /** Fetches `outputs` (all when undefined); tells `computed` the run's own time where only the engine knows it. */
  run(feeds: Record<string, Tensor>, outputs?: readonly string[], computed?: (ms: number) => void): Promise<Record<string, Tensor>>;
  /** Times runs on the thread that computes (Session.time). */
  time?(feeds: Record<string, Tensor>, runs: number): Promise<number>;
  release(): Promise<void>;
}

export interface OnnxRuntimeNodeOptions {
  /**
   * Starts a worker thread. onnxruntime-node's `run` computes on the calling thread, so with
   * workers each instance runs beside the event loop and N instances overlap; without them
   * sessions run in-process, one at a time, blocking I/O while they compute.
   */
  startWorker?: (module: URL) => WorkerHandle;
  /** Worker threads kept idle for the next load (default 2; one is started ahead of time). */
  idleWorkers?: number;
  /** Times inline runs for the starvation bound (default: the system clock). */
  clock?: Pick<Clock, "now" | "setTimeout" | "soon">;
  /** Inline compute between two event-loop yields, in ms (default `INLINE_BUDGET_MS`). */
  inlineBudgetMs?: number;
  /** `Platform.plainView`: in-process loads of kept bytes read them in place instead of copying. */
  plainView?: PlainView;
}

/**
 * The onnxruntime-node backend: CPU always, CUDA/TensorRT when their provider libraries are
 * installed. A provider that fails to initialise is remembered, so `auto` probes it once per process.
 */
export function createOnnxRuntimeNodeBackend(backendOptions: OnnxRuntimeNodeOptions = {}): Backend {
  const unavailable = new Map<string, string>();
  // First attempt per accelerated provider; concurrent loads wait for it instead of probing too.
  const probes = new Map<string, Promise<unknown>>();
  const { startWorker } = backendOptions;
  const module = new URL("./onnxruntime-worker.ts", import.meta.url);
  const pool = startWorker && new WorkerPool(startWorker, { maxIdle: backendOptions.idleWorkers ?? 2, module });
  // onnxruntime-node starts every run on a later macrotask (setImmediate): see InlineGate. The
  // deferral pays for itself: requests read in the same poll phase queue behind the pending run and
  // batch with it. Its native session run synchronously instead ran each request alone as it
  // arrived (simple, 8 binary clients: ~30 % fewer req/s) and saved nothing measurable at one
  // client (the check phase follows the poll phase that read the request); issue 11's note, stop 24.
  const gate = new InlineGate(backendOptions.clock ?? systemClock, { budgetMs: backendOptions.inlineBudgetMs, deferred: true });

  async function load(model: Uint8Array, options: LoadOptions): Promise<Session> {
    const connection = options.executionThread === "main" ? undefined : pool?.take();
    const open = async (settings: OrtSessionSettings): Promise<Engine> => {
      if (!connection) {
        const create = (s: OrtSessionSettings) => OrtSession.create(ortNode, model, s, backendOptions.plainView);
        const clock = backendOptions.clock ?? systemClock;
        // Timed after the spare worker's start (it takes a core: see WorkerPool.settled).
        const settled = () => pool?.settled();
        if (!answersUnpackedFirst(model, settings, options)) return inlineEngine(await create(settings), gate, clock, settled);
        const build = () => create(settings);
        return inlineEngine(await create({ ...settings, prepack: false }), gate, clock, settled, { build, log: options.log });
      }
      const signature = await connection.load(model, settings);
      return { signature, run: (feeds, outputs) => connection.run(feeds, outputs), time: async (feeds, runs) => (await pool!.settled(), connection.time(feeds, runs)), release: () => pool!.give(connection) };
    };
    const reasons: string[] = [];
    try {
      for (const provider of candidateProviders(options.accelerator)) {
        const probe = probes.get(provider);
        if (probe) await probe;
        const known = unavailable.get(provider);
        if (known) {
          reasons.push(known);
          continue;
        }
        const { deviceId, intraOpThreads, interOpThreads, graphLevel, allowSpinning, weightsInPlace } = options;
        const providerOptions = options.providerOptions?.[provider];
        // Only a CPU session writes its optimised form: that form is made for the CPU provider, and a
        // provider that failed once is skipped for the process's life, so loads from it land on the CPU too.
        const saveOptimizedTo = provider === "cpu" ? options.saveOptimizedTo : undefined;
        const attempt = open({ provider, deviceId, providerOptions, intraOpThreads, interOpThreads, graphLevel, allowSpinning, saveOptimizedTo, weightsInPlace, externalData: options.externalData });
        if (!probe && provider !== "cpu") probes.set(provider, attempt.catch(() => undefined));
        try {
          const engine = await attempt;
          const fallbackReason = reasons.length ? reasons.join("; ") : undefined;
          // `auto` on a host without CUDA is the expected case, not a misconfiguration: said once,
          // when the probe fails, rather than for every function.
          if (fallbackReason && options.accelerator !== "auto") {
            options.log?.warn(`accelerator '${options.accelerator}' fell back to ${provider}: ${fallbackReason}`);
          }
          return {
            signature: engine.signature,
            provider,
            fallbackReason,
            ...optionsNotApplied(options.providerOptions, provider),
            executionThread: connection ? "worker" : "main",
            get alive() {
              return connection?.alive;
            },
            run: (feeds: Record<string, Tensor>, runOptions?: SessionRunOptions) => engine.run(feeds, runOptions?.outputs, runOptions?.computed),
            // Its runs compute on onnxruntime-node's setImmediate: a batch formed on that hop takes this turn's arrivals.
            ...(!connection && immediate && { computeTurn: (fn: () => void) => void immediate(fn) }),
            ...(engine.time && { time: (feeds: Record<string, Tensor>, { runs }: { runs: number }) => engine.time!(feeds, runs) }),
            release: () => engine.release(),
          };
        } catch (error) {
          if (provider === "cpu") throw new RuntimeError("INVALID_ARG", `failed to load model${options.modelFile ? ` ${options.modelFile}` : ""}: ${errorMessage(error)}`, { cause: error });
          const reason = `${provider} execution provider unavailable (${errorMessage(error)})`;
          unavailable.set(provider, reason);
          reasons.push(reason);
          if (options.accelerator === "auto") options.log?.info(`accelerator 'auto': ${reason}; using the next provider`);
        }
      }
    } catch (error) {
      if (connection) await pool!.give(connection);
      throw error;
    }
    throw new Error("unreachable: cpu is always a candidate");
  }

  return { name: "onnxruntime-node", checkInput: checkOrtInput, load, workerThreads: pool !== undefined, close: async () => await pool?.drain() };
}

/**
 * Whether a load that asks for it (`LoadOptions.wakeUnpacked`) answers first from a session without
 * prepacking: a wake (kept ORT-format bytes) of a CPU session on the event loop whose weights stay in
 * place. Such a session is made in 1–2 ms without new memory where the prepacked one takes 13–16 ms of
 * faulting copies (mlp; docs/notes/2026-12-lifecycle-studies.md, "A wake without prepacking"), so the first answer after a
 * wake comes that much sooner. Not by default: its kernels round differently in the last bits, where
 * tensorfn's answers are otherwise the same bits whatever the batch.
 */
function answersUnpackedFirst(model: Uint8Array, settings: OrtSessionSettings, options: LoadOptions): boolean {
  return options.wakeUnpacked === true && settings.provider === "cpu" && settings.weightsInPlace === true && isOrtFormat(model);
}

/** The prepacked session an unpacked first session hands over to (see answersUnpackedFirst). */
interface Successor {
  build(): Promise<OrtSession>;
  log?: { warn(message: string): void };
}

/**
 * A session on the event loop. Its runs pass the gate (the starvation bound); a release waits for
 * the run in flight: onnxruntime-node starts the computation on a later turn (setImmediate), and
 * a session released in between aborts the process or leaves the run unsettled. That, not mixing
 * inline and worker sessions, is what "hung once" (reproduced with a release racing runs; mixed
 * placements under load are tested in test/e2e/execution-thread.test.ts).
 *
 * With a `successor`, `session` only answers until it is built: on the macrotask after the first
 * run (its answer is on its way by then), the prepacked session is built — on this thread, as
 * onnxruntime-node builds every session, so the loop waits for it as it waited for the wake's
 * single build, after the first answer instead of before it — and takes the next runs; `session` is
 * released once the runs it took are done. A failed build leaves `session` answering, slower on batches.
 */
function inlineEngine(session: OrtSession, gate: InlineGate, clock: Pick<Clock, "now" | "setTimeout" | "soon">, settled: () => Promise<void> | undefined, successor?: Successor): Engine {
  let current = session;
  let running: Promise<unknown> = Promise.resolve();
  let released = false;
  let handover: Promise<void> | undefined;
  const handOver = async () => {
    await new Promise<void>((resolve) => nextTurn(clock, resolve));
    if (released) return;
    let next: OrtSession;
    try {
      next = await successor!.build();
    } catch (error) {
      successor!.log?.warn(`the prepacked session could not be built (${errorMessage(error)}); the unpacked one keeps answering`);
      return;
    }
    if (released) return void (await next.release());
    const [previous, itsRuns] = [current, running];
    [current, running] = [next, Promise.resolve()];
    // Runs on one thread finish in the order they started: the last one started on `previous` ends last.
    await itsRuns;
    await previous.release();
  };
  return {
    signature: session.signature,
    run: (feeds, outputs, computed) => {
      const on = current;
      const result = gate.run(() => (computed && immediate ? timedRun(on, feeds, outputs, computed, clock) : on.run(feeds, outputs)));
      running = result.catch(() => undefined);
      if (successor && !handover) {
        handover = running.then(handOver).catch((error: unknown) => successor.log?.warn(`handing over to the prepacked session failed: ${errorMessage(error)}`));
      }
      return result;
    },
    // At a load, before any request: not through the gate, whose deferral is not the model's cost.
    time: async (feeds, runs) => {
      await settled();
      return await fastestRun(() => current.run(feeds), runs);
    },
    release: async () => {
      released = true;
      await handover;
      await running;
      await current.release();
    },
  };
}

/**
 * onnxruntime-node's own hop to the turn that computes (see InlineGate), reached from the global
 * scope: Node and Bun have it, and wherever onnxruntime-node runs its own code calls it.
 */
const immediate = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate;

/**
 * A run that says how long it computed: an immediate queued just before onnxruntime-node queues
 * its own runs first on the same turn, so from its time to the result is the computation (and
 * the conversions around it), without the wait for that turn.
 */
async function timedRun(session: OrtSession, feeds: Record<string, Tensor>, outputs: readonly string[] | undefined, computed: (ms: number) => void, clock: Pick<Clock, "now">) {
  let began: number | undefined;
  immediate!(() => (began = clock.now()));
  const result = await session.run(feeds, outputs);
  if (began !== undefined) computed(clock.now() - began);
  return result;
}

function candidateProviders(accelerator: LoadOptions["accelerator"]): string[] {
  switch (accelerator) {
    case "cuda":
    case "auto":
      return ["cuda", "cpu"];
    case "tensorrt":
      return ["tensorrt", "cuda", "cpu"];
    default:
      // webgpu and wasm belong to onnxruntime-web; this backend serves them on the CPU.
      return ["cpu"];
  }
}

/**
 * What onnxruntime-node's binding passes to the CUDA and TensorRT providers: the device and nothing
 * else (js/node/src/session_options_helper.cc creates their V2 options and sets only device_id, up
 * to 1.30 at least), so every other option a function asks for is not applied. Said in `/config`
 * rather than dropped silently; a binding that passes them needs no change here.
 */
const BINDING_PROVIDER_KEYS: Record<string, readonly string[]> = { cuda: ["deviceId"], tensorrt: ["deviceId"] };

function optionsNotApplied(asked: LoadOptions["providerOptions"], provider: string): { optionsNotApplied?: string } {
  const requested = Object.entries(asked ?? {}).filter(([, options]) => Object.keys(options).length > 0);
  if (requested.length === 0) return {};
  const listed = requested.map(([name, options]) => `${name} {${Object.entries(options).map(([k, v]) => `${k}=${v}`).join(", ")}}`).join("; ");
  if (!(provider in BINDING_PROVIDER_KEYS)) return { optionsNotApplied: `${listed}: the session runs on ${provider}` };
  return { optionsNotApplied: `${listed}: onnxruntime-node's binding passes only the device to the ${provider} provider` };
}

/** Inline compute allowed between two event-loop yields (ms), unless a backend says otherwise. */
export const INLINE_BUDGET_MS = 1;

/**
 * Keeps sessions that compute on the event loop (`execution_thread: main`) from starving HTTP.
 * Policy: inline runs add up their wall time; once the runs since the last yield used
 * `budgetMs`, the next run first yields one macrotask (`clock.soon`, a MessageChannel ping:
 * ~5–50 µs under Node, Bun and Deno, where `setTimeout(0)` costs 1–2 ms), so pending I/O is
 * served before it computes. A single run is never cut short: placement keeps inline only models
 * whose largest batch is cheap. One gate per backend, since every inline session shares the loop.
 *
 * `deferred`: the engine itself computes each run on a later macrotask (onnxruntime-node's
 * `run` does, through `setImmediate`; test/unit/backends/ort-session.test.ts checks it), so a run
 * issued while no other inline run is pending computes after pending I/O, on a turn of its own:
 * the budget starts over and it never waits. Only runs issued while another is pending can share
 * a turn, and only they are counted against the budget. Counting every run's wall time instead
 * (which includes its wait for that turn, i.e. the turn's HTTP work) spent the budget in two or
 * three runs under load, and each needless yield cost a MessageChannel and a turn of latency.
 */
export class InlineGate {
  readonly #clock: Pick<Clock, "now" | "setTimeout" | "soon">;
  readonly #budgetMs: number;
  readonly #deferred: boolean;
  #usedMs = 0;
  #pending = 0;
  #turn?: Promise<void>;
  #yields = 0;

  constructor(clock: Pick<Clock, "now" | "setTimeout" | "soon">, options: { budgetMs?: number; deferred?: boolean } = {}) {
    this.#clock = clock;
    this.#budgetMs = options.budgetMs ?? INLINE_BUDGET_MS;
    this.#deferred = options.deferred ?? false;
  }

  /** Runs one inline computation, after a yield when the budget since the last one is spent. */
  async run<T>(compute: () => Promise<T>): Promise<T> {
    if (this.#deferred && this.#pending === 0 && this.#turn === undefined) this.#usedMs = 0;
    else if (this.#usedMs >= this.#budgetMs) await this.#yield();
    this.#pending++;
    const start = this.#clock.now();
    try {
      return await compute();
    } finally {
      this.#pending--;
      this.#usedMs += this.#clock.now() - start;
    }
  }

  /** How many times the gate has yielded (for tests and diagnostics). */
  get yields(): number {
    return this.#yields;
  }

  // Runs waiting at the same time share one yield: one turn of I/O, then they go on in order.
  #yield(): Promise<void> {
    this.#turn ??= new Promise<void>((resolve) => {
      this.#yields++;
      const resume = () => {
        this.#usedMs = 0;
        this.#turn = undefined;
        resolve();
      };
      nextTurn(this.#clock, resume);
    });
    return this.#turn;
  }
}
