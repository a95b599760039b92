import type { Clock, InferRequest, InferResponse, PromptRequest, Tensor, TokenEvent } from "../core/mod.ts";
import { RuntimeError } from "../core/mod.ts";
import type { Session } from "../backends/backend.ts";
import { consumed, createScheduler, hasInstances, isGenerator, responses } from "../scheduler/mod.ts";
import type { GenerationUsage } from "../scheduler/mod.ts";
import type { Arrivals, InstanceScheduler, ModelInstance, ResourceClaim, ResourceLimiter, ResourceNeeds, Scheduler, SchedulerObserver, StepDispatch } from "../scheduler/mod.ts";
import type { FunctionConfig } from "../config/mod.ts";
import type { CachedReply, ResponseCache } from "../cache/mod.ts";
import type { HandlerHost } from "../pipeline/mod.ts";
import { observeAll } from "../metrics/mod.ts";
import type { FailureReason, ModelStats } from "../metrics/mod.ts";
import type { RequestHeader, TokenCodec } from "../tensor/mod.ts";
import { checkRequestHeader, collectOutputs, prepareRequest } from "./prepare-request.ts";
import { SelfHealingSession } from "./self-healing-session.ts";
import { holdsOnDevice } from "./memory-budget.ts";
import { VersionCache } from "./version-cache.ts";

/** What `cachedReply` answers where there is no reply cache. */
const NO_REPLY: { key?: string; reply?: CachedReply } = Object.freeze({});

/** The deployment began closing between being chosen and being asked: choose again. */
export class DeploymentClosedError extends RuntimeError {
  constructor(name: string, version: number) {
    super("UNAVAILABLE", `model '${name}' version ${version} is being unloaded`);
  }
}

export interface DeploymentOptions {
  config: FunctionConfig;
  version: number;
  /** Its instances' sessions; none for an ensemble, whose steps run other functions. */
  sessions?: Session[];
  /** The backend's check of one input tensor (ONNX Runtime's types), on every request. */
  checkInput?: (name: string, tensor: Tensor) => void;
  clock: Clock;
  /** Outlives the deployment: a parked and restored version keeps its statistics. */
  stats: ModelStats;
  /** Creates one more instance like the first (autoscaling up, and replacing an instance whose thread died). */
  createInstance?: () => Promise<Session>;
  /** What is known of requests still to come (the batcher's; see SchedulerSetup). */
  arrivals?: Arrivals;
  /** Triton's rate limiter and what each session needs from it (undefined: nothing, it runs freely). */
  resources?: { limiter: ResourceLimiter; needsOf: (session: Session) => ResourceNeeds | undefined };
  /** Where a lost instance is reported. */
  log?: { warn(message: string): void; error(message: string): void };
  /** Also told what the scheduler measures (the trace timeline). */
  observer?: SchedulerObserver;
  /** The server's response cache and this version's scope in it, when `response_cache` is enabled. */
  cache?: { store: ResponseCache; scope: string };
  /** The function's handler (`backend: handler`'s execute, or preprocess / postprocess around the model), finalized on close. */
  handler?: HandlerHost;
  /** Runs another function by tensors: an ensemble's steps. */
  dispatch?: StepDispatch;
  /** An ensemble answer's ceiling as a multiple of its input bytes (see EnsembleSchedulerOptions.outputRatio). */
  outputRatio?: number;
  /** Makes the backend's optimised form of the model, where it has one (see `loadDeployment`); undefined: none to make. */
  optimizedForm?: () => Promise<Uint8Array | undefined>;
  /** Classification labels by output name (the outputs' `label_filename`s, read once per registration). */
  labels?: ReadonlyMap<string, readonly string[]>;
  /** A sequence's first state by state input name, as raw bytes (`initial_state` `data_file`s); absent: zeros. */
  initialStates?: ReadonlyMap<string, Uint8Array>;
  /** A generator's tokenizer, chat template and generation defaults (`generation`). */
  codec?: TokenCodec;
}

/**
 * One function version in memory: its effective config, its instances and its scheduler. Its
 * life (loading, parking, unloading) is the model manager's business; a deployment only serves,
 * scales its instances and drains.
 */
export class Deployment {
  readonly name: string;
  readonly version: number;
  readonly config: FunctionConfig;
  /** Execution providers the instances use ("cpu", "cuda,cpu"…), and why one differs from the request if it does. */
  readonly provider: string;
  readonly fallbackReason?: string;
  /** Provider options asked for that the providers in use did not receive, and why (Session.optionsNotApplied). */
  readonly optionsNotApplied?: string;
  readonly stats: ModelStats;
  readonly #options: DeploymentOptions;
  readonly #sessions: Session[];
  readonly #scheduler: Scheduler;
  /** The same scheduler when it runs on instances of its own (not an ensemble's): scaling goes there. */
  readonly #instances?: InstanceScheduler;
  readonly #cache?: VersionCache;
  #active = 0;
  /** When the last request in flight ended (or the deployment was made): the version's idle timeout counts from it. */
  #idleSince: number;
  #closing = false;
  /** Rate-limiter registrations by instance. */
  readonly #claims = new Map<ModelInstance, ResourceClaim>();
  /** Serialises scaling so two decisions never race. */
  #scaling: Promise<void> = Promise.resolve();

  constructor(options: DeploymentOptions) {
    const { config, sessions = [] } = options;
    this.name = config.name;
    this.version = options.version;
    this.config = config;
    this.provider = [...new Set(sessions.map((s) => s.provider))].join(",");
    this.fallbackReason = sessions.find((s) => s.fallbackReason)?.fallbackReason;
    this.optionsNotApplied = sessions.find((s) => s.optionsNotApplied)?.optionsNotApplied;
    this.stats = options.stats;
    this.#options = options;
    this.#idleSince = options.clock.now();
    this.#sessions = sessions.map((session) => this.#instanceFor(session));
    this.#scheduler = createScheduler(config, {
      instances: this.#sessions,
      observer: options.observer ? observeAll(this.stats, options.observer) : this.stats,
      clock: options.clock,
      acquire: options.resources ? (instance) => this.#claims.get(instance)?.acquire() ?? Promise.resolve(() => {}) : undefined,
      dispatch: options.dispatch,
      arrivals: options.arrivals,
      outputRatio: options.outputRatio,
      log: options.log,
      onSequence: options.handler && ((event, id) => void options.handler!.sequence({ event, id })),
      initialStates: options.initialStates,
      codec: options.codec,
    });
    if (hasInstances(this.#scheduler)) this.#instances = this.#scheduler;
    if (options.cache) this.#cache = new VersionCache(options.cache, this.stats, options.clock, config.ensemble_scheduling !== undefined || config.backend === "handler");
  }

  /**
   * Makes the backend's optimised form of the model, for the version to keep and wake from
   * (undefined where there is none). It holds none of this deployment's sessions: the version
   * takes it when the deployment starts serving, and makes the form at a park, once they are gone.
   */
  get optimizedForm(): (() => Promise<Uint8Array | undefined>) | undefined {
    return this.#options.optimizedForm;
  }

  /** A generator's tokenizer and chat template; undefined for other functions. */
  get codec(): TokenCodec | undefined {
    return this.#options.codec;
  }

  /** A generator's scheduler state (running, waiting, KV cache use), for metrics and the dashboard. */
  get generation(): GenerationUsage | undefined {
    return isGenerator(this.#scheduler) ? this.#scheduler.usage : undefined;
  }

  /** A generator's last iterations' slots (see GeneratorInstances.recentSlots), for the dashboard. */
  generationSlots(): number[][] | undefined {
    return isGenerator(this.#scheduler) ? this.#scheduler.recentSlots() : undefined;
  }

  /** The function's handler, when it has one. */
  get handler(): HandlerHost | undefined {
    return this.#options.handler;
  }

  /** Instances serving now. */
  get instanceCount(): number {
    return this.#sessions.length;
  }

  /** Instances whose session runs on an execution provider that holds weights on the device. */
  get deviceInstanceCount(): number {
    return this.#sessions.filter((s) => holdsOnDevice(s.provider)).length;
  }

  /** Requests queued and not yet executing (`nv_inference_pending_request_count`). */
  get pending(): number {
    return this.#scheduler.queued;
  }

  /** Sequences whose state this deployment holds (a sequence batcher's); 0 elsewhere. */
  get liveSequences(): number {
    return this.#scheduler.sequences ?? 0;
  }

  /** Requests admitted and not yet answered (queued, running or being encoded). */
  get inflight(): number {
    return this.#active;
  }

  /** When the deployment last went idle (its last request in flight ended; its making, before any). */
  get idleSince(): number {
    return this.#idleSince;
  }

  #leave(): void {
    if (--this.#active === 0) this.#idleSince = this.#options.clock.now();
  }

  /**
   * Checks what a request declares against this version's config, before its data is decoded; a
   * refusal counts as a failed request, as it did when the check ran on the decoded request.
   */
  checkRequest(header: RequestHeader): void {
    try {
      checkRequestHeader(header, this.config);
    } catch (error) {
      this.stats.failed(0, failureReason(error));
      throw error;
    }
  }

  /**
   * Refuses with 503 (counted as a rejected request, as the queue would count it) when no
   * priority level has room, so the HTTP layer need not read the body of a request it must refuse.
   */
  checkRoom(): void {
    if (this.#closing || this.#scheduler.hasRoom()) return; // a closing deployment: let infer() retry on its successor
    this.stats.failed(0, "REJECTED");
    throw new RuntimeError("UNAVAILABLE", `Exceeds maximum queue size for model '${this.name}' version ${this.version}: every priority level is full`);
  }

  /** Validates, queues and runs one request; resolves with its own outputs. */
  async infer(request: InferRequest, options: { signal?: AbortSignal } = {}): Promise<InferResponse> {
    if (this.#closing) throw new DeploymentClosedError(this.name, this.version);
    const { clock } = this.#options;
    const started = clock.now();
    this.#active++;
    try {
      const scheduled = prepareRequest(request, this.config, this.#options.checkInput);
      const result = this.#cache ? await this.#cache.result(scheduled, request, () => this.#scheduler.enqueue(scheduled, options)) : await this.#scheduler.enqueue(scheduled, options);
      const response = { modelName: this.name, modelVersion: String(this.version), id: request.id, outputs: collectOutputs(request, result, this.config, this.#options.labels) };
      this.stats.succeeded(clock.now() - started);
      return response;
    } catch (error) {
      this.stats.failed(clock.now() - started, failureReason(error));
      throw error;
    } finally {
      this.#leave();
    }
  }

  /**
   * Validates and queues one request and yields its responses as its scheduler makes them: one
   * from a one-shot scheduler (`infer`'s, the response cache included), several from a streaming
   * one (never cached). Counted as one request, as Triton counts a decoupled model's; a stream its
   * consumer abandons counts as cancelled.
   */
  async *stream(request: InferRequest, options: { signal?: AbortSignal } = {}): AsyncGenerator<InferResponse, void, undefined> {
    if (!this.#scheduler.stream) {
      yield await this.infer(request, options);
      return;
    }
    const results = this.#counted(() => responses(this.#scheduler, prepareRequest(request, this.config, this.#options.checkInput), options));
    for await (const result of results) {
      yield { modelName: this.name, modelVersion: String(this.version), id: request.id, outputs: collectOutputs(request, result, this.config, this.#options.labels) };
    }
  }

  /**
   * A generator's token events for a prompt in token ids (the OpenAI routes, Triton's generate on
   * a generator), as its loop makes them; counted as `stream` counts a request.
   */
  generate(request: PromptRequest, options: { signal?: AbortSignal } = {}): AsyncGenerator<TokenEvent, void, undefined> {
    const scheduler = this.#scheduler;
    if (!isGenerator(scheduler)) throw new RuntimeError("INVALID_ARG", `'${this.name}' is not a generator (a function with generation)`);
    return this.#counted(() => consumed((signal) => scheduler.generate(request, { signal }), options.signal));
  }

  /** What `open` yields, counted as one request: a success at its end, a failure, or cancelled when its consumer stops first. */
  async *#counted<T>(open: () => AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    if (this.#closing) throw new DeploymentClosedError(this.name, this.version);
    const { clock } = this.#options;
    const started = clock.now();
    let outcome: "done" | "failed" | undefined;
    this.#active++;
    try {
      yield* open();
      outcome = "done";
      this.stats.succeeded(clock.now() - started);
    } catch (error) {
      outcome = "failed";
      this.stats.failed(clock.now() - started, failureReason(error));
      throw error;
    } finally {
      if (!outcome) this.stats.failed(clock.now() - started, "CANCELED");
      this.#leave();
    }
  }

  /**
   * Ours, with `response_cache`: the encoded reply to a request of exactly these bytes, counted as
   * a cache hit and a success like any hit; else the key to keep the reply under once it is made
   * (none without a cache, or without a native digest).
   */
  cachedReply(framing: string, body: Uint8Array): { key?: string; reply?: CachedReply } {
    if (!this.#cache || this.#closing) return NO_REPLY; // every uncached request passes here: no allocation
    const found = this.#cache.reply(framing, body);
    // A hit is activity too: the idle timeout counts from it.
    if (found.reply && this.#active === 0) this.#idleSince = this.#options.clock.now();
    return found;
  }

  /** Keeps the encoded reply of a successful request under the key `cachedReply` gave. */
  keepReply(key: string, reply: CachedReply): void {
    if (!this.#closing) this.#cache?.keepReply(key, reply);
  }

  /** Grows or shrinks to `count` instances (at least one); removed instances finish their batch first. */
  scaleTo(count: number): Promise<void> {
    const target = Math.max(1, count);
    if (!this.#instances) return this.#scaling; // an ensemble has no instances to scale
    this.#scaling = this.#scaling.then(async () => {
      while (!this.#closing && this.#sessions.length < target && this.#options.createInstance) {
        const session = this.#instanceFor(await this.#options.createInstance());
        if (this.#closing) return void (await session.release());
        this.#sessions.push(session);
        this.#instances!.pool.add(session);
      }
      while (!this.#closing && this.#sessions.length > target) {
        const removed = (await this.#instances!.pool.remove()) as Session;
        this.#sessions.splice(this.#sessions.indexOf(removed), 1);
        this.#claims.get(removed)?.unregister();
        this.#claims.delete(removed);
        await removed.release();
      }
    });
    return this.#scaling;
  }

  /**
   * The instance the scheduler sees: with a way to create instances, one whose thread dies is
   * replaced instead of failing every batch after; with the rate limiter, it is registered there.
   */
  #instanceFor(session: Session): Session {
    const { createInstance, log, resources } = this.#options;
    const instance = createInstance
      ? new SelfHealingSession(session, {
          create: createInstance,
          onLost: () => this.stats.transition("restart", "crashed"),
          log: log ?? { warn() {}, error() {} },
        })
      : session;
    const needs = resources?.needsOf(session);
    if (needs) this.#claims.set(instance, resources!.limiter.register(needs));
    return instance;
  }

  /** Why an instance was lost, while one is being replaced (a crashed function process restarting): readiness is false meanwhile. */
  get restarting(): string | undefined {
    for (const s of this.#sessions) {
      const why = s instanceof SelfHealingSession ? s.replacing : undefined;
      if (why !== undefined) return why;
    }
    return undefined;
  }

  /** Stops taking requests, lets in-flight ones finish, then releases every session. */
  async close(): Promise<void> {
    this.#closing = true;
    await this.#scaling.catch(() => undefined);
    await this.#scheduler.stop();
    await Promise.all(this.#sessions.map((s) => s.release()));
    this.#sessions.length = 0;
    await this.#options.handler?.close();
    for (const claim of this.#claims.values()) claim.unregister();
    this.#claims.clear();
  }
}

/** Triton's failure reasons: refused by the queue, cancelled, the backend failed, anything else. */
function failureReason(error: unknown): FailureReason {
  if (!(error instanceof RuntimeError)) return "BACKEND";
  if (error.code === "CANCELLED") return "CANCELED";
  if (error.code === "UNAVAILABLE") return "REJECTED";
  if (error.code === "INTERNAL" || error.code === "DEADLINE_EXCEEDED") return "BACKEND";
  return "OTHER";
}
