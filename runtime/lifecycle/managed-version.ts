// Over 400 lines: every state change of one version (load, reload, park, wake, evict, unload, the
// retry after a failure) runs under one single-flight lock and one set of invariants.
import { RuntimeError } from "../core/mod.ts";
import type { Clock, Logger } from "../core/mod.ts";
import { ModelStats } from "../metrics/mod.ts";
import type { Deployment } from "./deployment.ts";
import { planTransition } from "./deployment-state.ts";
import type { DeploymentState, ParkReason, Transition, VersionEvent } from "./deployment-state.ts";
import type { Footprint } from "./memory-budget.ts";
import { versionFootprint } from "./memory-budget.ts";

/**
 * A load or reload cancelled before it finished (an unload, a newer load, a shutdown): no fault of
 * the version's, so the load that waited for it is answered 503, not a failure's 400.
 */
export class LoadCancelled extends RuntimeError {
  constructor(message: string) {
    super("UNAVAILABLE", message);
  }
}

/** Lazy mode's retry backoff after a failed load (`retryAt`). */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/** What a version needs from its function to (re)load. */
export interface VersionLoader {
  /** The model's bytes, from the repository or a load-API override. */
  readBytes(): Promise<Uint8Array>;
  /**
   * Builds the deployment from bytes (sessions, config completion, warm-up), counting into `stats`;
   * stops and releases what it made when `signal` aborts. `optimize`: the version keeps bytes to
   * wake from and these are not yet a backend's optimised form, so the deployment should be able to
   * make one (`Deployment.optimizedForm`).
   */
  load(bytes: Uint8Array, options: { stats: ModelStats; signal?: AbortSignal; optimize?: boolean }): Promise<Deployment>;
}

/** Idle behaviour, from the function's `scale` section and the server defaults. */
export interface IdlePolicy {
  /** 0 = never idle out. */
  timeoutMs: number;
  park: "host" | "none";
}

/**
 * One function version through its whole life: UNAVAILABLE → LOADING → READY ⇄ PARKED, and
 * UNLOADING back to UNAVAILABLE; FAILED when a load failed. Loads are single-flight (concurrent
 * callers share one), a reload swaps in the new deployment only once it is ready, and the old one
 * drains before it is released.
 */
export class ManagedVersion {
  readonly name: string;
  readonly version: number;
  /** Kept across park and reload, as Triton keeps a version's statistics while it is loaded. */
  readonly stats = new ModelStats();
  #state: DeploymentState = "UNAVAILABLE";
  #reason = "";
  /** Loads failed in a row, and when the last one did (for lazy mode's retries). */
  #failures = 0;
  #failedAt = 0;
  #deployment?: Deployment;
  /** Model bytes kept in host memory while READY or PARKED with `park: host` (see `keptBytes`). */
  #bytes?: Uint8Array;
  /** `#bytes` are a deployment's optimised form (`Deployment.optimizedForm`), not the file's. */
  #optimized = false;
  /** Makes that form for the deployment serving now (taken when it started serving; made at a park). */
  #makeForm?: () => Promise<Uint8Array | undefined>;
  #loading?: Promise<Deployment>;
  /** Aborts the load in progress (unload cancels it rather than waiting for every instance). */
  #abortLoad?: AbortController;
  /** Aborts the reload in progress: an unload, a newer reload or a shutdown cancels it. */
  #abortReload?: AbortController;
  #reloading?: Promise<unknown>;
  #idleTimer: unknown;
  #lastUsed = 0;
  readonly #clock: Clock;
  readonly #log: Logger;
  #loader: VersionLoader;
  #idle: IdlePolicy;

  /**
   * Called once memory was let go: `droppedBytes` when model bytes this heap held went with it (an
   * unload, a reload, the optimised form replacing them), which only a full collection frees; a park
   * releases sessions, whose memory is native (or a worker's, which collects its own).
   */
  readonly #onReleased?: (droppedBytes: boolean) => void;

  constructor(
    name: string,
    version: number,
    options: { loader: VersionLoader; idle: IdlePolicy; clock: Clock; log: Logger; onReleased?: (droppedBytes: boolean) => void },
  ) {
    this.name = name;
    this.version = version;
    this.#onReleased = options.onReleased;
    this.#loader = options.loader;
    this.#idle = options.idle;
    this.#clock = options.clock;
    this.#log = options.log;
  }

  get state(): DeploymentState {
    return this.#state;
  }

  /** Why the version is not READY, or what the last reload attempt said. */
  get reason(): string {
    return this.#reason;
  }

  get deployment(): Deployment | undefined {
    return this.#deployment;
  }

  get lastUsed(): number {
    return this.#lastUsed;
  }

  /** Requests in flight on the current deployment. */
  get inflight(): number {
    return this.#deployment?.inflight ?? 0;
  }

  /** True while a load is running. */
  /** Sequences whose state the loaded deployment holds (0 when none is loaded). */
  get liveSequences(): number {
    return this.#deployment?.liveSequences ?? 0;
  }

  get loading(): boolean {
    return this.#loading !== undefined;
  }

  /** Bytes held now (`versionFootprint`): the kept model bytes, plus the sessions of the deployment if any. */
  footprint(): Footprint {
    const model = this.#bytes?.byteLength ?? 0;
    const d = this.#deployment;
    if (!d) return versionFootprint(model, 0, 0);
    const device = d.deviceInstanceCount;
    return versionFootprint(model, d.instanceCount - device, device, d.generation?.kvBytes ?? 0);
  }

  /** What parking would leave held: the model bytes with `park: host`, nothing with `park: none`. */
  footprintWhenParked(): Footprint {
    return { host: this.#idle.park === "host" ? (this.#bytes?.byteLength ?? 0) : 0, device: 0 };
  }

  /** Marks a use now (for least-recently-used choices). */
  touch(): void {
    this.#lastUsed = this.#clock.now();
  }

  /** The READY deployment, loading (or restoring from PARKED) first if needed; one load at a time. */
  ensureReady(): Promise<Deployment> {
    this.touch();
    if (this.#plan({ on: "request" }).do === "serve") return Promise.resolve(this.#deployment!);
    this.#loading ??= this.#load().finally(() => (this.#loading = undefined));
    return this.#loading;
  }

  /**
   * Loads a new deployment from fresh bytes while the current one (if any) keeps serving, then
   * swaps. On failure the current one keeps serving and `reason` says why; the error is rethrown.
   */
  async reload(loader: VersionLoader, idle: IdlePolicy): Promise<void> {
    // The newest content wins: a reload still building (a long warm-up, say) is cancelled, not waited for.
    this.#abortReload?.abort(new LoadCancelled(`reloading '${this.name}' version ${this.version} was superseded by a newer load`));
    await this.#reloading?.catch(() => undefined);
    this.#loader = loader;
    this.#idle = idle;
    const old = this.#deployment;
    if (!old) {
      // Not in memory: the next request loads the new content.
      this.#keep(undefined);
      if (this.#state === "PARKED" || this.#state === "FAILED") this.#set("UNAVAILABLE", "");
      return;
    }
    const abort = (this.#abortReload = new AbortController());
    const reloading = (async () => {
      const bytes = keptBytes(await loader.readBytes(), idle);
      abort.signal.throwIfAborted();
      const next = await loader.load(bytes, { stats: this.stats, signal: abort.signal, optimize: idle.park === "host" });
      if (abort.signal.aborted || this.#deployment !== old) {
        // Cancelled once it was built, or the version was unloaded meanwhile: never swapped in.
        await next.close();
        abort.signal.throwIfAborted();
        throw new LoadCancelled(`reloading '${this.name}' version ${this.version} was cancelled: the version was parked or unloaded meanwhile`);
      }
      this.#keep(bytes);
      this.#serve(next);
      this.#set("READY", "");
      this.#armIdle();
      this.#log.info(`${this.name} v${this.version}: reloaded; draining the previous deployment`);
      await old.close();
      this.#onReleased?.(true);
    })();
    this.#reloading = reloading;
    try {
      await reloading;
    } catch (error) {
      if (abort.signal.aborted) {
        const why = abort.signal.reason instanceof LoadCancelled ? abort.signal.reason : new LoadCancelled(`reloading '${this.name}' version ${this.version} was cancelled`);
        this.#log.info(`${this.name} v${this.version}: ${why.message}`);
        throw why;
      }
      this.#reason = `reload failed, previous deployment still serving: ${(error as Error).message}`;
      this.#log.error(`${this.name} v${this.version}: ${this.#reason}`);
      throw error;
    } finally {
      if (this.#abortReload === abort) this.#abortReload = undefined;
      if (this.#reloading === reloading) this.#reloading = undefined;
    }
  }

  /**
   * Cancels a load or reload in progress (their warm-ups included), leaving what serves: at
   * shutdown, the requests waiting on a load get their answer now rather than at the drain's end.
   */
  cancelLoads(reason: string): void {
    const why = new LoadCancelled(`loading '${this.name}' version ${this.version} was cancelled: ${reason}`);
    this.#abortLoad?.abort(why);
    this.#abortReload?.abort(why);
  }

  /** Releases the sessions but keeps the model bytes (READY → PARKED); with `park: none`, unloads. */
  park(why: ParkReason = "api"): Promise<void> {
    return this.#apply(this.#plan({ on: "park", why }));
  }

  /** The transition `event` calls for now (deployment-state.ts decides; this applies). */
  #plan(event: VersionEvent): Transition {
    const d = this.#deployment;
    const view = { state: this.#state, loaded: d !== undefined, park: this.#idle.park, inflight: d?.inflight ?? 0, liveSequences: d?.liveSequences ?? 0, idleMs: d ? this.#clock.now() - d.idleSince : 0, idleTimeoutMs: this.#idle.timeoutMs };
    return planTransition(view, event);
  }

  /** Applies a park, an unload or a wait; the others are their callers' (a load is single-flight, in `ensureReady`). */
  async #apply(t: Transition): Promise<void> {
    if (t.do === "park") return this.#park(t.why);
    if (t.do === "unload") return this.unload("unloaded", t.why);
    if (t.do === "wait") return this.#armIdle(t.ms);
  }

  async #park(why: ParkReason): Promise<void> {
    const d = this.#deployment!;
    this.stats.transition("park", why);
    this.#set("UNLOADING", "parking");
    this.#deployment = undefined;
    await d.close();
    // A request that came while the sessions drained has started a wake: it owns the state now
    // (PARKED over it would hide its deployment, and the next wake would leak that one).
    if ((this.#state as DeploymentState) === "UNLOADING") this.#set("PARKED", "parked: sessions released, model kept in host memory");
    this.#onReleased?.(false);
    // Not for a park for room (it needs the memory now, not one more session), nor under a wake.
    if ((this.#state as DeploymentState) === "PARKED" && why !== "budget" && !this.#optimized) await this.#optimize();
  }

  /** Drains and releases everything (→ UNAVAILABLE); `why` labels the lifecycle metric. */
  async unload(reason = "unloaded", why = "api"): Promise<void> {
    this.#clearIdle();
    this.#abortLoad?.abort();
    this.#abortReload?.abort(new LoadCancelled(`reloading '${this.name}' version ${this.version} was cancelled by an unload`));
    await Promise.all([this.#loading?.catch(() => undefined), this.#reloading?.catch(() => undefined)]);
    const d = this.#deployment;
    this.#deployment = undefined;
    this.#keep(undefined);
    if (d || this.#state === "PARKED") this.stats.transition("unload", why);
    if (d) {
      this.#set("UNLOADING", reason);
      await d.close();
    }
    this.#set("UNAVAILABLE", reason);
    if (d) this.#onReleased?.(true);
  }

  async #load(): Promise<Deployment> {
    const from = this.#state;
    this.#set("LOADING", "");
    const started = this.#clock.now();
    const abort = (this.#abortLoad = new AbortController());
    try {
      let bytes = this.#bytes ?? keptBytes(await this.#loader.readBytes(), this.#idle);
      let fromForm = this.#optimized;
      abort.signal.throwIfAborted();
      let deployment: Deployment;
      try {
        deployment = await this.#loader.load(bytes, { stats: this.stats, signal: abort.signal, optimize: this.#idle.park === "host" && !this.#optimized });
      } catch (error) {
        if (!this.#optimized || abort.signal.aborted) throw error;
        // The optimised form is an extra: a wake it cannot serve loads from the file, as a first load does.
        this.#log.warn(`${this.name} v${this.version}: waking from the optimised model failed (${(error as Error).message}); loading the model file`);
        this.#keep(undefined);
        fromForm = false;
        bytes = keptBytes(await this.#loader.readBytes(), this.#idle);
        deployment = await this.#loader.load(bytes, { stats: this.stats, signal: abort.signal, optimize: this.#idle.park === "host" });
      }
      this.#keep(this.#idle.park === "host" ? bytes : undefined);
      this.#serve(deployment);
      this.#set("READY", "");
      this.#failures = 0;
      const ms = Math.round(this.#clock.now() - started);
      this.stats.loaded(this.#clock.now() - started, from === "PARKED" ? "parked" : "disk");
      const woke = from === "PARKED" ? (fromForm ? " (from PARKED, its optimised model)" : " (from PARKED)") : "";
      this.#log.info(`${this.name} v${this.version}: READY on ${deployment.provider} in ${ms} ms${woke}`);
      this.#armIdle();
      return deployment;
    } catch (error) {
      if (abort.signal.aborted) {
        // Not a failure of the version: unload() sets the state once this settles (a shutdown's cancel says why).
        const why = abort.signal.reason instanceof LoadCancelled ? abort.signal.reason : new LoadCancelled(`loading '${this.name}' version ${this.version} was cancelled by an unload`);
        this.#log.info(`${this.name} v${this.version}: ${why.message.replace(/^loading '[^']*' version \d+ was /, "load ")}`);
        if (this.#state === "LOADING") this.#set("UNAVAILABLE", why.message);
        throw why;
      }
      this.#failures++;
      this.#failedAt = this.#clock.now();
      this.#set("FAILED", `failed to load '${this.name}' version ${this.version}: ${(error as Error).message}`);
      this.#log.error(`${this.name} v${this.version}: ${this.#reason}`);
      // For the request that wanted it, a version that cannot load is the server's problem: 503.
      throw new RuntimeError("UNAVAILABLE", this.#reason, { cause: error });
    } finally {
      if (this.#abortLoad === abort) this.#abortLoad = undefined;
    }
  }

  /**
   * When a FAILED version may be tried again on a request (lazy mode): 1 s after the first failure,
   * doubling with each failure in a row, at most a minute. Undefined unless FAILED.
   */
  retryAt(): number | undefined {
    if (this.#state !== "FAILED" || this.#failures === 0) return undefined;
    return this.#failedAt + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (this.#failures - 1));
  }

  /** Loads failed in a row. */
  get failures(): number {
    return this.#failures;
  }

  /** Keeps `bytes` to wake from (nothing with undefined). */
  #keep(bytes: Uint8Array | undefined): void {
    this.#optimized = this.#optimized && bytes !== undefined && bytes === this.#bytes;
    this.#bytes = bytes;
  }

  /**
   * Makes the parked deployment's optimised form and keeps that instead of the file's bytes
   * (an ORT-format model: resnet wakes ~2x faster). At a park, not a load: a load is what a request
   * waits for, and a version that never parks never needs it. A wake that starts meanwhile loads
   * from the bytes as they are.
   */
  async #optimize(): Promise<void> {
    const bytes = this.#bytes;
    const make = this.#makeForm;
    this.#makeForm = undefined; // made once
    const form = await make?.().catch(() => undefined);
    // Unless a reload or an unload replaced the bytes meanwhile.
    const replaced = Boolean(form && bytes && this.#bytes === bytes);
    if (replaced) {
      this.#bytes = form;
      this.#optimized = true;
      this.#log.info(`${this.name} v${this.version}: keeps its optimised model (${(form!.byteLength / 1e6).toFixed(1)} MB) to wake from`);
    }
    this.#onReleased?.(replaced); // what making it took, and the bytes the form replaced
  }

  /** `d` serves from now on; the version takes what it needs of it for later (the maker of its optimised form). */
  #serve(d: Deployment): void {
    this.#deployment = d;
    this.#makeForm = d.optimizedForm;
  }

  /**
   * Starts the idle timeout afresh (a load, a reload) or waits out what is left of one: one timer,
   * whose expiry asks `planTransition` what the version's idleness calls for. No call per request
   * comes up here: the deployment's `idleSince` says when it last went idle.
   */
  #armIdle(afterMs?: number): void {
    this.#clearIdle();
    if (this.#idle.timeoutMs <= 0 || this.#state !== "READY") return;
    this.#idleTimer = this.#clock.setTimeout(() => {
      this.#idleTimer = undefined;
      const t = this.#plan({ on: "idle-timer" });
      if (t.do === "park" || t.do === "unload") this.#log.info(`${this.name} v${this.version}: idle for ${this.#idle.timeoutMs} ms, ${t.do === "park" ? "parking" : "unloading"}`);
      void this.#apply(t);
    }, afterMs ?? this.#idle.timeoutMs);
  }

  #clearIdle(): void {
    if (this.#idleTimer !== undefined) this.#clock.clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  #set(state: DeploymentState, reason: string): void {
    this.#state = state;
    this.#reason = reason;
  }
}

/**
 * The bytes as a version reads them: in shared memory when it keeps them (`park: host`), so each
 * load, and above all each wake, hands the worker thread a reference where a structured clone made
 * two copies of the model, the first on the event loop (50 ms for resnet's 47 MB). Copied as they
 * are read, so the read's own array is garbage at once (an upload's stays in its function's files).
 * A session on the event loop copies them once per create instead (onnxruntime-node refuses shared
 * memory); `auto` puts only cheap models there.
 */
function keptBytes(bytes: Uint8Array, idle: IdlePolicy): Uint8Array {
  return idle.park === "host" ? sharedBytes(bytes) : bytes;
}

/** `bytes` in shared memory (copied there unless they are already, or it does not exist). */
export function sharedBytes(bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength === 0 || typeof SharedArrayBuffer !== "function" || bytes.buffer instanceof SharedArrayBuffer) return bytes;
  const shared = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  shared.set(bytes);
  return shared;
}
