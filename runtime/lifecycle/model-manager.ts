// Over 500 lines: every question the call pipeline and the routes ask of the functions (lookup,
// admission, infer, stream, readiness, statistics, the index) in one facade over the registry.
import { RuntimeError } from "../core/mod.ts";
import type { Clock, InferRequest, InferResponse, Tensor } from "../core/mod.ts";
import type { DeclaredConfig, LoadLimits } from "../config/mod.ts";
import { functionNameProblem } from "../config/mod.ts";
import { concatBatch, splitBatch } from "../tensor/mod.ts";
import type { MetricsEntry, ModelStats, RolloutFigures } from "../metrics/mod.ts";
import { AutoscaleLoop } from "./autoscale-loop.ts";
import { Lease } from "./lease.ts";
import { ROLLOUT_KEY_HEADER } from "./rollout.ts";
import type { RolloutChange, RolloutView } from "./rollout.ts";
import { RolloutControl } from "./rollout-control.ts";
import type { LeaseRunOptions } from "./lease.ts";
import type { Deployment } from "./deployment.ts";
import type { DeploymentState } from "./deployment-state.ts";
import { DEFAULT_LOAD_TIMEOUT_MS } from "./load-timeout.ts";
import { FunctionRegistry } from "./function-registry.ts";
import type { ControlMode, FunctionRecord, FunctionRegistryOptions, LoadOverride } from "./function-registry.ts";
import type { ManagedVersion } from "./managed-version.ts";
import type { Budgets, Footprint } from "./memory-budget.ts";
import { versionFootprint } from "./memory-budget.ts";
import { pulledModelBytes, pulledModelEntry } from "../repository/mod.ts";

export type { ControlMode } from "./function-registry.ts";

export interface ModelManagerOptions extends FunctionRegistryOptions {
  /** Repository poll period in poll mode (`--repository-poll-secs`). */
  pollIntervalMs?: number;
  /** How long a request waits for an on-demand load before 503. Default 120 s. */
  loadTimeoutMs?: number;
  /** Autoscaler tick (Knative: 2 s). */
  autoscaleIntervalMs?: number;
}

/** A generator's figures for the metrics and the dashboard: nothing running, waiting or cached when it is not in memory. */
function generatorEntry(d: Deployment | undefined, declared: NonNullable<DeclaredConfig["generation"]>): NonNullable<MetricsEntry["generation"]> {
  const usage = d?.generation;
  if (!d || !usage) return { running: 0, waiting: 0, kvUsage: 0, prefix: { queries: 0, hits: 0 }, mode: declared.mode, slots: declared.max_num_seqs };
  return { ...usage, recentSlots: () => d.generationSlots() ?? [] };
}

export { DEFAULT_LOAD_TIMEOUT_MS } from "./load-timeout.ts";

/** One row of the repository index. */
export interface VersionStatus {
  name: string;
  version?: string;
  state: DeploymentState;
  reason: string;
}

/** How a call looks its deployment up. */
export interface AcquireOptions {
  signal?: AbortSignal;
  /** The request's headers: admission by `rate_limit`, and a rollout's key header. */
  admission?: (header: string) => string | undefined;
  /**
   * The request's sequence id, where it has one: a rollout routes it by that, before the key
   * header (the sequence's state lives on one version), and never retries it on the stable one.
   */
  sequence?: string;
}

/**
 * The lifecycle front, what serving asks of the functions: admission by `rate_limit`, lookup with
 * on-demand loading bounded by a timeout, inference that retries on a reload's successor,
 * readiness, statistics, metrics and the repository index. The functions themselves (registration,
 * control modes, loads, reloads, budgets) are the FunctionRegistry's; the autoscaling loop is its
 * own module. It runs the timers of both (polling, autoscaling).
 */
export class ModelManager {
  readonly #options: ModelManagerOptions;
  readonly #registry: FunctionRegistry;
  readonly #autoscale: AutoscaleLoop;
  readonly #rollouts: RolloutControl;
  #timers: unknown[] = [];
  #stopped = false;
  /** The last scan a request for an unknown name started, by name (#scanFor), and when it ended. */
  readonly #scans = new Map<string, { done: Promise<boolean>; doneAt?: number }>();

  constructor(options: ModelManagerOptions) {
    this.#options = options;
    this.#registry = new FunctionRegistry({
      ...options,
      dispatch: (name, version, inputs, signal, outputs) => this.#dispatch(name, version, inputs, signal, outputs),
      // An ensemble's steps load with it, in every control mode (as Triton loads composing models).
      lookup: async (name, version) => {
        this.#registry.want(name);
        return (await this.acquire(name, version)).config;
      },
    });
    this.#autoscale = new AutoscaleLoop({ clock: options.clock, log: options.platform.log });
    this.#rollouts = new RolloutControl(this.#registry, { clock: options.clock, log: options.platform.log, acquire: (name, version, o) => this.acquire(name, version, o) });
  }

  get controlMode(): ControlMode {
    return this.#registry.controlMode;
  }

  /** The ceilings in force, for the repository API to validate overrides with. */
  get limits(): LoadLimits {
    return this.#registry.limits;
  }

  /** The memory budgets in force (empty when unlimited). */
  get budgets(): Budgets {
    return this.#registry.budgets;
  }

  /** Registers the repository and loads what the control mode says; starts polling and autoscaling. */
  async start(): Promise<void> {
    await this.#registry.start();
    if (this.controlMode === "poll") this.#every(this.#options.pollIntervalMs ?? 15_000, () => this.poll());
    this.#every(this.#options.autoscaleIntervalMs ?? 2_000, () => this.#autoscale.tick(this.#registry.functions()));
    this.#every(1_000, () => this.#rollouts.analyse());
  }

  /**
   * The deployment to serve `name` (and `version`, else the default one), loading it on demand.
   * With `admission` (the request's header lookup), the function's `rate_limit` admits the
   * request first, on the same lookup: a refused request loads nothing and never queues.
   */
  async acquire(name: string, version?: string, options: AcquireOptions = {}): Promise<Deployment> {
    return this.acquireNow(name, version, options);
  }

  /**
   * `acquire`, answering a READY deployment itself rather than a promise of it (what the hot path
   * awaits costs a turn); a version that must load first comes as a promise. Refusals throw.
   */
  acquireNow(name: string, version?: string, options: AcquireOptions = {}, scanned = false): Deployment | Promise<Deployment> {
    let fn: FunctionRecord;
    try {
      fn = this.#registry.function(name);
    } catch (error) {
      // Lazy mode: a folder added since the last scan (a `cp` the watcher has not reported yet)
      // is scanned for now, not answered 404.
      if (scanned || this.controlMode !== "lazy") throw error;
      return this.#scanFor(name).then((found) => {
        if (!found) throw error;
        return this.acquireNow(name, version, options, true);
      });
    }
    const v = version === undefined && fn.rollout ? this.#registry.route(fn, options.sequence !== undefined ? `sequence ${options.sequence}` : options.admission?.(ROLLOUT_KEY_HEADER)) : this.#registry.pick(fn, version);
    if (options.admission && fn.limiter) this.#admit(fn, v, options.admission);
    if (v.state === "READY" && v.deployment) {
      v.touch();
      return v.deployment;
    }
    if (fn.error) throw new RuntimeError("UNAVAILABLE", `model '${name}' is not ready: ${fn.error}`);
    if (v.state === "FAILED") this.#retryOrRefuse(v);
    if (!fn.wanted) {
      // In lazy mode only a deliberate act leaves a function down: an unload with `disable`, or an ensemble whose steps stopped fitting (its reason says so).
      const why = this.controlMode === "lazy" ? `was disabled (${v.reason && v.reason !== "unloaded" ? v.reason : "unloaded with parameters.disable"})` : `is not loaded (control mode ${this.controlMode})`;
      throw new RuntimeError("UNAVAILABLE", `model '${name}' ${why}; load it first`);
    }
    return bounded(v.ensureReady(), { ms: this.#options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS, clock: this.#options.clock, signal: options.signal, what: `'${name}' version ${v.version}` });
  }

  /**
   * Whether `name` is registered after a scan for it: only for a valid name whose folder exists in
   * the repository, and at most one scan a second (shared by the requests waiting on it), so
   * requests for names that stay unknown cost a stat, never a scan each.
   */
  async #scanFor(name: string): Promise<boolean> {
    if (functionNameProblem(name)) return false;
    if (!(await this.#options.platform.stat(`${this.#options.repository}/${name}`))?.isDirectory) return false;
    const now = this.#options.clock.now();
    const last = this.#scans.get(name);
    if (!last || (last.doneAt !== undefined && now - last.doneAt >= 1000)) {
      // Keyed by names whose folder exists: as many as the repository has folders.
      const scan: { done: Promise<boolean>; doneAt?: number } = { done: this.#registry.discover(name) };
      scan.done = scan.done.finally(() => (scan.doneAt = this.#options.clock.now()));
      this.#scans.set(name, scan);
    }
    await this.#scans.get(name)!.done;
    return this.#registry.has(name);
  }

  /**
   * A FAILED version: in lazy mode, once its backoff has passed, a request tries the load again
   * (and the log says so); until then, and in the other modes (where the load API retries), 503
   * with the failure and, in lazy mode, when the next try may come.
   */
  #retryOrRefuse(v: ManagedVersion): void {
    const at = this.controlMode === "lazy" ? v.retryAt() : undefined;
    const wait = at === undefined ? undefined : at - this.#options.clock.now();
    if (wait === undefined || wait > 0) {
      const next = wait === undefined ? "" : ` (tried ${v.failures} time${v.failures === 1 ? "" : "s"}; a request after ${Math.ceil(wait / 1000)} s tries again)`;
      throw new RuntimeError("UNAVAILABLE", `${v.reason}${next}`, wait === undefined ? undefined : { retryAfterMs: wait });
    }
    this.#options.platform.log.info(`${v.name} v${v.version}: retrying the load that failed ${v.failures} time${v.failures === 1 ? "" : "s"} (lazy mode)`);
  }

  /**
   * Admission by the function's `rate_limit` alone (what `acquire` does with `admission`). `header`
   * reads the request's headers (for `key_header`). Throws 404 as inference would, and
   * RATE_LIMITED with the wait when refused.
   */
  admit(name: string, version: string | undefined, header: (name: string) => string | undefined = () => undefined): void {
    const fn = this.#registry.function(name);
    if (!fn.limiter) return; // the unlimited common case: acquire() checks the version
    this.#admit(fn, this.#registry.pick(fn, version), header);
  }

  #admit(fn: FunctionRecord, v: ManagedVersion, header: (name: string) => string | undefined): void {
    const limit = fn.declared?.rate_limit;
    if (!fn.limiter || !limit) return;
    const name = fn.name;
    const key = limit.key_header ? (header(limit.key_header) ?? "") : "";
    const admission = fn.limiter.take(key);
    if (admission.ok) return;
    v.stats.rateLimited();
    if (admission.total) {
      throw new RuntimeError(
        "RATE_LIMITED",
        `rate limit exceeded for model '${name}': rate_limit allows ${limit.total_requests_per_second} requests per second in total (total_burst ${limit.total_burst}); retry in ${Math.ceil(admission.retryAfterMs)} ms`,
        { retryAfterMs: admission.retryAfterMs },
      );
    }
    const who = limit.key_header ? ` per ${limit.key_header}` : "";
    throw new RuntimeError(
      "RATE_LIMITED",
      `rate limit exceeded for model '${name}': rate_limit allows ${limit.requests_per_second} requests per second${who} (burst ${limit.burst}); retry in ${Math.ceil(admission.retryAfterMs)} ms`,
      { retryAfterMs: admission.retryAfterMs },
    );
  }

  /**
   * `acquireNow` as a lease: the deployment found, on which the call's inference runs (on its
   * successor should it start closing first). A READY one comes back at once, not as a promise.
   */
  leaseNow(name: string, version: string | undefined, options: AcquireOptions = {}): Lease | Promise<Lease> {
    const found = this.acquireNow(name, version, options);
    return found instanceof Promise ? found.then((d) => this.#lease(d, name, version, options)) : this.#lease(found, name, version, options);
  }

  /** The lease on `d`, with what its function's rollout adds to it (rollout-control.ts). */
  #lease(d: Deployment, name: string, version: string | undefined, options: AcquireOptions): Lease {
    const rollout = version === undefined ? this.#rollouts.leaseRollout(name, d, options.sequence) : undefined;
    return new Lease(d, this.#reacquire, name, version, rollout);
  }

  readonly #reacquire = (name: string, version: string | undefined, options: { signal?: AbortSignal }) => this.acquire(name, version, options);

  /** Runs one request on the deployment serving `name` now (a function's own call: a handler's ctx.infer, an ensemble's step). */
  async infer(name: string, version: string | undefined, request: InferRequest, options: LeaseRunOptions = {}): Promise<InferResponse> {
    return (await this.leaseNow(name, version, options)).infer(request, options);
  }

  /** Runs one request and yields its responses (one from a one-shot scheduler). */
  async *stream(name: string, version: string | undefined, request: InferRequest, options: LeaseRunOptions = {}): AsyncGenerator<InferResponse, void, undefined> {
    yield* (await this.leaseNow(name, version, options)).stream(request, options);
  }

  /**
   * Whether `name` (or one version) can serve now or on demand — as a Knative service scaled to
   * zero is still Ready — and why not when it cannot.
   */
  readiness(name: string, version?: string): { ready: boolean; version: number; state: DeploymentState; reason: string } {
    const fn = this.#registry.function(name);
    const v = this.#registry.pick(fn, version);
    const restarting = v.state === "READY" ? v.deployment?.restarting : undefined;
    if (restarting !== undefined) return { ready: false, version: v.version, state: v.state, reason: this.redact(`an instance is restarting (${restarting})`) };
    const reason = this.redact(fn.error ?? (v.reason || (!fn.wanted ? "not loaded" : v.state)));
    const ready = v.state === "READY" || (!fn.error && fn.wanted && v.state !== "FAILED" && v.state !== "UNLOADING");
    return { ready, version: v.version, state: v.state, reason };
  }

  /**
   * The functions server readiness waits for and that are not ready (Triton's strict readiness):
   * those the control mode loads — every one in `none` and `poll`, the `--load-model` ones and
   * those loaded through the API since in `explicit` — and none in `lazy`, where every function
   * loads on its first request. A function unloaded on purpose is not waited for.
   */
  unready(): string[] {
    if (this.#registry.controlMode === "lazy") return [];
    return this.#registry
      .functions()
      .filter((fn) => fn.wanted)
      .filter((fn) => {
        try {
          return !this.readiness(fn.name).ready;
        } catch {
          return true; // no version to pick (a broken config): not ready
        }
      })
      .map((fn) => fn.name);
  }

  /** `text` with absolute paths into the repository made relative (see FunctionRegistry.redact): for anything an answer says. */
  redact(text: string): string {
    return this.#registry.redact(text);
  }

  /** Served version numbers of a function, ascending (for model metadata). */
  versions(name: string): string[] {
    return [...this.#registry.function(name).versions.keys()].sort((a, b) => a - b).map(String);
  }

  /** Statistics of every served version (or one function's, or one version's); NOT_FOUND as for inference. */
  statistics(name?: string, version?: string): { name: string; version: string; state: DeploymentState; instances: number; stats: ModelStats }[] {
    const fns = name === undefined ? this.#registry.functions() : [this.#registry.function(name)];
    if (name !== undefined && version !== undefined) this.#registry.pick(fns[0]!, version);
    return fns.flatMap((fn) =>
      [...fn.versions.values()]
        .filter((v) => version === undefined || v.version === Number(version))
        .sort((a, b) => a.version - b.version)
        .map((v) => ({ name: fn.name, version: String(v.version), state: v.state, instances: v.deployment?.instanceCount ?? 0, stats: v.stats })),
    );
  }

  /** Every served version with what the Prometheus families read at scrape time. */
  metricsEntries(options: { exported?: boolean } = {}): MetricsEntry[] {
    return this.#registry.functions().flatMap((fn) =>
      // `exported`: what /metrics shows — versions that have loaded since the server started, or
      // are not simply unloaded (loading, failed): as Triton, no series for a function never loaded.
      [...fn.versions.values()].filter((v) => !options.exported || v.stats.everLoaded || v.state !== "UNAVAILABLE").map((v) => ({
        name: fn.name,
        version: String(v.version),
        state: v.state,
        instances: v.deployment?.instanceCount ?? 0,
        targetInstances: this.#autoscale.desired(v) ?? v.deployment?.instanceCount ?? 0,
        pending: v.deployment?.pending ?? 0,
        stats: v.stats,
        memory: v.footprint(),
        cacheEnabled: fn.declared?.response_cache?.enable === true && this.#options.responseCache !== undefined,
        cold: isCold(fn, v),
        ...(fn.declared?.sequence_batching && { sequences: v.liveSequences }),
        ...(fn.rollout?.sideOf(v.version) && { rollout: fn.rollout.sideOf(v.version) }),
        ...(fn.declared?.generation && { generation: generatorEntry(v.deployment, fn.declared.generation) }),
      })),
    );
  }

  /**
   * Every function with what serves it and its versions' states (`GET /v1/functions`): `handler`
   * for `backend: handler`, else the backend's name.
   */
  functions(): { name: string; kind: string; handler?: string; ready: boolean; error?: string; versions: { version: string; state: DeploymentState | "COLD"; reason: string }[] }[] {
    return this.#registry.functions().map((fn) => ({
      name: fn.name,
      // "unknown" where the config does not parse: `error` says why (its file:line).
      kind: fn.declared?.backend ?? "unknown",
      ...(fn.declared?.handler ? { handler: fn.declared.handler } : {}),
      ready: fn.versions.size > 0 && this.readiness(fn.name).ready,
      ...(fn.error ? { error: this.redact(fn.error) } : {}),
      // Ours, for people: COLD where KServe says UNAVAILABLE of a version the next request loads.
      versions: [...fn.versions.values()].sort((a, b) => a.version - b.version).map((v) => ({ version: String(v.version), state: isCold(fn, v) ? "COLD" : v.state, reason: this.redact(fn.error ?? v.reason) })),
    }));
  }

  /** The functions that generate text (`generation`) or embed it (`embedding`): the OpenAI API's models. */
  openAiModels(): string[] {
    return this.#registry.functions().filter((fn) => fn.declared?.generation || fn.declared?.embedding).map((fn) => fn.name);
  }

  /** Every function and version with its state and reason, for the repository index. */
  index(options: { readyOnly?: boolean } = {}): VersionStatus[] {
    const rows: VersionStatus[] = [];
    for (const fn of this.#registry.functions()) {
      if (fn.versions.size === 0) rows.push({ name: fn.name, state: fn.error ? "FAILED" : "UNAVAILABLE", reason: this.redact(fn.error ?? "") });
      for (const v of [...fn.versions.values()].sort((a, b) => a.version - b.version)) {
        rows.push({ name: fn.name, version: String(v.version), state: v.state, reason: this.redact(fn.error ?? v.reason) });
      }
    }
    return options.readyOnly ? rows.filter((r) => r.state === "READY") : rows;
  }

  /**
   * Loads or reloads a function (repository API). `config` replaces function.yaml (Triton's JSON
   * form, already parsed); `files` replace the model files by version. Resolves once every served
   * version is READY; a failed reload leaves the previous deployment serving.
   */
  load(name: string, override: LoadOverride = {}): Promise<void> {
    return this.#registry.load(name, override);
  }

  /**
   * Registers function `name` from a model ModelMesh's puller left at `path` under `root` (its
   * folder, read in place; `pulledModelEntry` says which layouts) and loads it. A load that fails
   * leaves nothing registered.
   */
  async loadPulled(name: string, path: string, root: string): Promise<void> {
    const entry = await pulledModelEntry(this.#options.platform, root, name, path);
    try {
      await this.#registry.load(name, { entry });
    } catch (error) {
      await this.#registry.forget(name).catch(() => false);
      throw error;
    }
  }

  /** What a pulled model would hold once loaded with one instance (`versionFootprint`), from its size on disk alone. */
  async predictPulled(name: string, path: string, root: string): Promise<number> {
    const entry = await pulledModelEntry(this.#options.platform, root, name, path);
    return versionFootprint(await pulledModelBytes(this.#options.platform, entry), 1, 0).host;
  }

  /** Unloads a function and forgets it (ModelMesh's unloadModel); false when none is registered as `name`. */
  forget(name: string): Promise<boolean> {
    return this.#registry.forget(name);
  }

  /** The functions registered from outside the repository (`load` with an `entry`: ModelMesh's models). */
  external(): string[] {
    return this.#registry.functions().filter((fn) => fn.entry?.external).map((fn) => fn.name);
  }

  /** What a function's versions hold now in host and device memory (`versionFootprint`); undefined for an unknown name. */
  footprint(name: string): Footprint | undefined {
    const fn = this.#registry.functions().find((f) => f.name === name);
    if (!fn) return undefined;
    return [...fn.versions.values()].reduce((sum, v) => {
      const held = v.footprint();
      return { host: sum.host + held.host, device: sum.device + held.device };
    }, { host: 0, device: 0 });
  }

  /**
   * Drains and unloads every version of a function; it stays registered, UNAVAILABLE (in lazy
   * mode cold, its next request loads it, unless `disable`). With `dependents`, an ensemble's step
   * functions too (those no other wanted ensemble runs); resolves with the functions unloaded.
   */
  unload(name: string, options: { dependents?: boolean; disable?: boolean } = {}): Promise<string[]> {
    this.#rollouts.stopShadows(name); // their copies never hold up the drain
    return this.#registry.unload(name, options);
  }

  /** A function's rollout as it stands, after `change` where one is given (the rollout API). */
  rollout(name: string, change?: RolloutChange): RolloutView {
    return this.#rollouts.view(name, change);
  }

  /** Every rollout's figures, for the metrics. */
  rollouts(): RolloutFigures[] {
    return this.#rollouts.figures();
  }

  /** Parks a READY function now (dev tools); no-op for others. */
  park(name: string): Promise<void> {
    return this.#registry.park(name);
  }

  /** Brings the registry in line with the repository (poll mode's timer; the dev server on file changes). */
  poll(): Promise<void> {
    return this.#registry.poll();
  }

  /**
   * A shutdown began: loads and reloads in progress are cancelled (a warm-up stops at its next run),
   * so a request waiting on one is answered within the drain; what serves keeps serving.
   */
  cancelLoads(): void {
    this.#registry.cancelLoads("the server is shutting down");
  }

  /** Stops timers, then drains and releases every deployment. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers) this.#options.clock.clearTimeout(t);
    this.#rollouts.stopShadows();
    await this.#registry.stop();
  }

  /**
   * `ctx.infer` from a handler, an ensemble's step: another function, by tensors, as an inference
   * request would run it. Ours: rows a batching function could share out are sent as several
   * requests (`rowShares`) that run concurrently, their outputs joined in order, so a call with
   * more rows than its `max_batch_size` is served, and one while instances stand idle uses them.
   */
  async #dispatch(name: string, version: string | undefined, inputs: Record<string, Tensor>, signal: AbortSignal, outputs?: readonly string[]): Promise<Record<string, Tensor>> {
    const lease = await this.leaseNow(name, version, { signal });
    const acquired = lease.deployment;
    const run = async (part: Record<string, Tensor>) => {
      const request: InferRequest = { parameters: {}, inputs: Object.entries(part).map(([input, tensor]) => ({ name: input, tensor })) };
      if (outputs) request.outputs = outputs.map((output) => ({ name: output }));
      const response = await lease.infer(request, { signal });
      return Object.fromEntries(response.outputs.map((o) => [o.name, o.tensor]));
    };
    const shares = acquired.config.ensemble_scheduling ? undefined : rowShares(inputs, acquired.config.max_batch_size, acquired.instanceCount);
    if (!shares) return run(inputs);
    // Two shares in flight per instance keep every instance busy and let the batcher fill batches,
    // while a call of a million rows (an ensemble step a client sized) never queues them all at once.
    const parts = await inOrder(shares, Math.max(2, 2 * acquired.instanceCount), run);
    return Object.fromEntries(Object.keys(parts[0]!).map((output) => [output, concatBatch(parts.map((p) => p[output]!))]));
  }

  #every(ms: number, task: () => Promise<void>): void {
    const schedule = () => {
      if (this.#stopped) return;
      const timer = this.#options.clock.setTimeout(async () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
        await task().catch((e: Error) => this.#options.platform.log.error(e.message));
        schedule();
      }, ms);
      this.#timers.push(timer);
    };
    schedule();
  }
}

/**
 * Most requests one call is shared out into: a call of more rows than this many full requests
 * is sent whole, and refused as any request over `max_batch_size` is (an ensemble step's rows come
 * from a client, who must not turn one request into thousands).
 */
export const MAX_ROW_SHARES = 64;

/**
 * How a call's rows are shared out as requests, or undefined to send it whole: only for a batching
 * function (rows are independent there) whose inputs agree on their rows, in shares of at most
 * `max_batch_size` rows and at most a share per instance (3 rows, 2 instances: 2 + 1), and at
 * most MAX_ROW_SHARES of them. Queued shares of concurrent calls batch together again, up to
 * `max_batch_size` rows.
 */
export function rowShares(inputs: Record<string, Tensor>, maxBatchSize: number, instances: number): Record<string, Tensor>[] | undefined {
  const tensors = Object.values(inputs);
  const rows = tensors[0]?.shape[0];
  if (maxBatchSize <= 0 || rows === undefined || rows < 2 || rows > maxBatchSize * MAX_ROW_SHARES) return undefined;
  if (tensors.some((t) => t.shape.length === 0 || t.shape[0] !== rows)) return undefined;
  const share = Math.min(maxBatchSize, Math.ceil(rows / Math.max(1, instances)));
  if (share >= rows) return undefined;
  const sizes: number[] = [];
  for (let left = rows; left > 0; left -= share) sizes.push(Math.min(share, left));
  const split = Object.entries(inputs).map(([name, tensor]) => [name, splitBatch(tensor, sizes)] as const);
  return sizes.map((_, i) => Object.fromEntries(split.map(([name, parts]) => [name, parts[i]!])));
}

/** `run` over `items` with at most `limit` running at once; results in the items' order; the first failure rejects, and starts no more. */
async function inOrder<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        results[i] = await run(items[i]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Waits for `work`, but at most `ms` on the injected clock, and no longer than the caller's signal allows. */
function bounded<T>(work: Promise<T>, options: { ms: number; clock: Clock; signal?: AbortSignal; what: string }): Promise<T> {
  const { ms, clock, signal, what } = options;
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(new RuntimeError("UNAVAILABLE", `timed out after ${ms} ms waiting for ${what} to load`)), ms);
    const onAbort = () => reject(new RuntimeError("CANCELLED", "the request was cancelled while its function loaded"));
    signal?.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clock.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    });
  });
}

/** Not in memory, and loaded by the next request that names it: wanted, without an error, UNAVAILABLE. */
function isCold(fn: { wanted: boolean; error?: string }, v: { state: DeploymentState }): boolean {
  return fn.wanted && !fn.error && v.state === "UNAVAILABLE";
}
