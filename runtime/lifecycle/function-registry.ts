// Over 400 lines: registering, the control modes, polling and the repository API all change one map of
// records under the same invariants (a reload swaps only when ready; a removed version drains); loading
// itself is version-loaders.ts, the ensemble graph ensemble-graph.ts.
import { FileRefused, invalidArg, RuntimeError } from "../core/mod.ts";
import type { Clock, Platform } from "../core/mod.ts";
import { CONFIG_FILE_LIMITS, defaultLoadLimits, fieldPath, formatIssue, FUNCTION_FILE, functionNameProblem, limitProblems, MAX_VERSION, parseConfigFile } from "../config/mod.ts";
import type { Accelerator, DeclaredConfig, FunctionConfig, HostPolicy, LoadLimits } from "../config/mod.ts";
import { ensembleWiringProblems } from "../config/mod.ts";
import type { Backend } from "../backends/backend.ts";
import { fingerprint, scanRepository, selectVersions } from "../repository/mod.ts";
import type { HandlerEscapes } from "../pipeline/mod.ts";
import type { FunctionEntry } from "../repository/mod.ts";
import type { CustomMetrics, TraceRecorder } from "../metrics/mod.ts";
import type { Arrivals, ResourceLimiter, StepDispatch } from "../scheduler/mod.ts";
import type { ResponseCache } from "../cache/mod.ts";
import { includesItself, stepsOnlyOf } from "./ensemble-graph.ts";
import { LoadCancelled, ManagedVersion } from "./managed-version.ts";
import { VersionLoaders } from "./version-loaders.ts";
import type { IdlePolicy } from "./managed-version.ts";
import type { Budgets } from "./memory-budget.ts";
import { PoolManager } from "./pool-manager.ts";
import { KeyedRateLimiter } from "./rate-limiter.ts";
import { Rollout, rolloutVersions } from "./rollout.ts";
import { pathRedaction } from "./path-redaction.ts";
import { checkUploadQuota, uploadedBytes } from "./upload-quota.ts";
import type { UploadedFiles } from "./upload-quota.ts";

/**
 * Triton's model control modes plus ours: `lazy` registers every function at start and loads
 * each on its first request (the serverless default).
 */
export type ControlMode = "none" | "poll" | "explicit" | "lazy";

export interface FunctionRegistryOptions {
  platform: Platform;
  /** Repository root: one sub-folder per function. */
  repository: string;
  /** Backends by config `backend` name ("onnxruntime", "identity"). */
  backends: Record<string, Backend>;
  clock: Clock;
  /** Server-wide default when a function.yaml does not say (`--accelerator`). */
  accelerator?: Accelerator;
  /** Default "lazy". */
  controlMode?: ControlMode;
  /** Triton's `--host-policy` policies by name, for `instance_group[].host_policy` to name. */
  hostPolicies?: Readonly<Record<string, HostPolicy>>;
  /** Functions loaded at start in explicit mode (`--load-model`; "*" = all). */
  loadModels?: readonly string[];
  budgets?: Budgets;
  /** Device bytes NVML sees in use since start (GPU telemetry): held against the device budget when above the estimate. */
  observedDeviceBytes?: () => number | undefined;
  /** Idle time before a function at min_instances 0 parks, unless its `scale` says. Default: 5 min in lazy mode, never otherwise. */
  idleTimeoutMs?: number;
  /** How long a load may take (`--load-timeout-secs`): a version's warm-up, all samples together, is held to it. */
  loadTimeoutMs?: number;
  /** Timeline recorder every deployment reports to (its rate decides whether it records). */
  trace?: TraceRecorder;
  /** Triton's rate limiter, shared by every function (`--rate-limit execution_count`). */
  resourceLimiter?: ResourceLimiter;
  /**
   * What is known of requests still to come (the HTTP server's client connections): batchers do not
   * wait for requests that cannot come, nor long for clients not expected soon. Absent: anything may arrive.
   */
  arrivals?: Arrivals;
  /** Server-wide ceilings on configs and uploads (`--max-instances`…); unset ones take `defaultLoadLimits()`. */
  limits?: Partial<LoadLimits>;
  /** The server's response cache (`--cache-size`), for functions with `response_cache: { enable: true }`. */
  responseCache?: ResponseCache;
  /** Runs a function with tensors, for handlers' `ctx.infer` and ensembles' steps (the lifecycle front supplies it). */
  dispatch?: StepDispatch;
  /** Where errors that escape handlers (timers, unawaited promises) are attributed to their function. */
  escapes?: HandlerEscapes;
  /** Handlers' own metrics (`ctx.metrics`): a function's series go when it unloads. */
  customMetrics?: CustomMetrics;
  /** A function's effective config, loading it on demand (an ensemble's steps; the lifecycle front supplies it). */
  lookup?: (name: string, version: string | undefined) => Promise<FunctionConfig>;
}

/** One function as registered: its config, its served versions, whether it should be serving. */
export interface FunctionRecord {
  name: string;
  entry?: FunctionEntry;
  declared?: DeclaredConfig;
  /** Why the function as a whole cannot load (bad function.yaml, no versions). */
  error?: string;
  /** Why the repository's current function.yaml was refused while this registration kept serving. */
  refused?: string;
  fingerprint: string;
  versions: Map<number, ManagedVersion>;
  /** False until loaded in explicit mode, and after an unload: no on-demand loads then. */
  wanted: boolean;
  /** Files given through the load API (the model, its external data), by version; replace the repository's. */
  files?: UploadedFiles;
  /** Present when function.yaml sets `rate_limit`; kept across reloads that leave it unchanged. */
  limiter?: KeyedRateLimiter;
  /** Present when function.yaml sets `rollout`: which version serves a request that names none. */
  rollout?: Rollout;
  /** Which registration this is (one server-wide count): the response cache's scope, so a reload never meets old answers. */
  generation: number;
}

/**
 * The functions of one repository, as Triton's model repository manager keeps them: scanning and
 * registering, the control modes, polling, loads and unloads through the repository API, reloads
 * that swap only once the new version is ready, and retiring versions the policy no longer serves.
 * Loads run under the memory budgets (park, then evict, least recently used first) with session
 * creates and `execution_thread: auto` probes one at a time. It does not serve requests: the
 * lifecycle front (ModelManager) looks functions up here.
 */
/** What a load may replace of a function's folder (the repository API; ModelMesh). */
export interface LoadOverride {
  /** Replaces function.yaml (Triton's JSON form, already parsed). */
  config?: DeclaredConfig;
  /** Replace the version folders' files, by version (uploaded through the repository API). */
  files?: UploadedFiles;
  /** A folder outside the repository to register the function from (a model ModelMesh pulled). */
  entry?: FunctionEntry;
}

export class FunctionRegistry {
  readonly #options: FunctionRegistryOptions;
  readonly #mode: ControlMode;
  readonly #functions = new Map<string, FunctionRecord>();
  /** Present when budgets are set: keeps loads within them. */
  readonly #pool?: PoolManager;
  readonly #limits: LoadLimits;
  readonly #loaders: VersionLoaders;
  /** Scanner warnings already logged (skipped folders), so polls do not repeat them. */
  readonly #warned = new Set<string>();
  #generations = 0;

  constructor(options: FunctionRegistryOptions) {
    this.#options = options;
    this.#limits = { ...defaultLoadLimits(options.platform.cpuCount()), ...options.limits };
    this.#mode = options.controlMode ?? "lazy";
    const { budgets } = options;
    if (budgets && (budgets.host !== undefined || budgets.device !== undefined)) this.#pool = new PoolManager(budgets, options.platform.log, options.observedDeviceBytes);
    this.#loaders = new VersionLoaders({
      ...options,
      limits: this.#limits,
      pool: this.#pool,
      versions: () => [...this.#functions.values()].flatMap((f) => [...f.versions.values()]),
      includesItself: (name) => includesItself(name, this.#stepsOf),
      starting: () => this.#starting,
    });
  }

  get controlMode(): ControlMode {
    return this.#mode;
  }

  /** The ceilings in force, for the repository API to validate overrides with. */
  get limits(): LoadLimits {
    return this.#limits;
  }

  /** The memory budgets in force (empty when unlimited). */
  get budgets(): Budgets {
    return this.#options.budgets ?? {};
  }

  /** Whether `name` is registered. */
  has(name: string): boolean {
    return this.#functions.has(name);
  }

  /** Every registered function, by name. */
  functions(): FunctionRecord[] {
    return [...this.#functions.values()].sort(byName);
  }

  /** The function registered as `name`; NOT_FOUND (404) as inference reports it. */
  function(name: string): FunctionRecord {
    const fn = this.#functions.get(name);
    if (!fn) throw new RuntimeError("NOT_FOUND", `Request for unknown model: '${name}' is not found`);
    return fn;
  }

  /** The version asked for (404 outside the policy), or the highest READY one, else the highest served. */
  pick(fn: FunctionRecord, version?: string): ManagedVersion {
    if (version !== undefined) {
      const v = /^[0-9]+$/.test(version) ? fn.versions.get(Number(version)) : undefined;
      if (!v) throw new RuntimeError("NOT_FOUND", `Request for unknown model: '${fn.name}' version ${version} is not found`);
      return v;
    }
    // Under a rollout the default version is the stable one.
    const stable = fn.rollout && fn.versions.get(fn.rollout.stable);
    if (stable) return stable;
    const all = [...fn.versions.values()].sort((a, b) => b.version - a.version);
    const v = all.find((x) => x.state === "READY") ?? all[0];
    if (!v) throw new RuntimeError("UNAVAILABLE", `model '${fn.name}' is not ready: ${fn.error ?? "no version to serve"}`);
    return v;
  }

  /**
   * The version that serves a request naming none: under a rollout, the one its share (and `key`,
   * when the request has one) gives, the stable one where the canary failed to load; else `pick`'s.
   */
  route(fn: FunctionRecord, key?: string): ManagedVersion {
    const chosen = fn.rollout && fn.versions.get(fn.rollout.choose(key));
    return chosen && chosen.state !== "FAILED" ? chosen : this.pick(fn);
  }

  /**
   * Marks a registered function wanted (an ensemble that loads needs its steps' functions: in
   * explicit mode a function not loaded yet would refuse them), without loading it: the next
   * lookup loads it on demand. NOT_FOUND for a name not registered.
   */
  want(name: string): void {
    this.function(name).wanted = true;
  }

  /** `text` as an answer may say it: no absolute path into the repository (path-redaction.ts; set by start()). */
  redact: (text: string) => string = (text) => text;

  /** True while start() runs: the server serves nothing yet (VersionLoadersOptions.starting). */
  #starting = false;

  /** Registers the repository and loads what the control mode says (every wanted version, unless lazy). */
  async start(): Promise<void> {
    this.#starting = true;
    try {
      await this.#startLoads();
    } finally {
      this.#starting = false;
    }
  }

  async #startLoads(): Promise<void> {
    this.redact = await pathRedaction(this.#options.platform, this.#options.repository);
    const entries = await scanRepository(this.#options.platform, this.#options.repository, { warned: this.#warned });
    const explicit = new Set(this.#options.loadModels ?? []);
    for (const entry of entries) {
      const wanted = this.#mode !== "explicit" || explicit.has("*") || explicit.has(entry.name);
      await this.#register(entry, wanted);
    }
    for (const name of explicit) {
      if (name !== "*" && !this.#functions.has(name)) this.#options.platform.log.error(`--load-model '${name}': no such function in the repository`);
    }
    if (this.#mode !== "lazy") {
      const loads = [...this.#functions.values()].filter((fn) => fn.wanted).flatMap((fn) => [...fn.versions.values()]);
      await Promise.all(loads.map((v) => v.ensureReady().catch(() => undefined)));
    }
  }

  /**
   * Loads or reloads a function (repository API). `config` replaces function.yaml (Triton's JSON
   * form, already parsed); `files` replace the model files by version. Resolves once every served
   * version is READY; a failed reload leaves the previous deployment serving.
   */
  async load(name: string, override: LoadOverride = {}): Promise<void> {
    this.#checkControl(name);
    const over = override.config ? limitProblems(override.config, this.#limits) : [];
    if (over.length > 0) throw invalidArg(`failed to load '${name}': ${over.map((p) => `${fieldPath(p.path)}: ${p.problem}`).join("; ")}`);
    if (override.files) {
      const bad = [...override.files.keys()].find((v) => !Number.isInteger(v) || v < 1 || v > MAX_VERSION);
      if (bad !== undefined) throw invalidArg(`failed to load '${name}': version ${bad} is not an integer in 1..${MAX_VERSION}`);
      const uploaded = new Map([...this.#functions.values()].filter((f) => f.files).map((f) => [f.name, uploadedBytes(f.files!)]));
      checkUploadQuota(name, override.files, uploaded, this.#limits);
    }
    const entry = override.entry ?? (override.files ? undefined : (await scanRepository(this.#options.platform, this.#options.repository, { warned: this.#warned })).find((e) => e.name === name));
    if (!entry && !override.files) throw invalidArg(`failed to load '${name}': no such function in the repository`);
    const existing = this.#functions.get(name);
    const fn = await this.#register(entry ?? { name, dir: `${this.#options.repository}/${name}`, versions: [...override.files!.keys()].sort((a, b) => a - b) }, true, override);
    const problem = fn.error ?? (fn === existing ? fn.refused : undefined);
    if (problem) throw invalidArg(`failed to load '${name}': ${problem}`);
    const results = await Promise.allSettled([...fn.versions.values()].map((v) => (existing?.versions.get(v.version) === v && v.deployment ? this.#reload(fn, v) : v.ensureReady())));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) {
      const message = `failed to load '${name}': ${(failed.reason as Error).message.replace(/^failed to load '[^']*' version \d+: /, "")}`;
      // Cancelled (an unload, a newer load, a shutdown) is no fault of the function's: 503, not 400.
      throw failed.reason instanceof LoadCancelled ? new LoadCancelled(message) : invalidArg(message);
    }
    await this.#recheckDependents(name);
  }

  /**
   * After `name` (re)loaded: every loaded ensemble with a step on it checks its wiring against the
   * configs served now. One that no longer fits unloads, saying why in the index, instead of
   * failing each request at that step (Triton reloads an ensemble's dependents; one whose reload
   * fails is UNAVAILABLE). The ensemble dispatches by name, so one that still fits runs the new steps.
   */
  async #recheckDependents(name: string): Promise<void> {
    const { platform } = this.#options;
    for (const e of [...this.#functions.values()]) {
      const steps = e.declared?.ensemble_scheduling?.step;
      if (!steps?.some((step) => step.model_name === name)) continue;
      const loaded = [...e.versions.values()].filter((v) => v.deployment);
      if (loaded.length === 0) continue;
      // The configs served now, loading nothing: a step that is not READY is checked when it loads.
      const functions = steps.map((step) => this.#servedConfig(step.model_name, step.model_version));
      if (functions.some((f) => f === undefined)) continue;
      const problems = ensembleWiringProblems(loaded[0]!.deployment!.config, functions as FunctionConfig[]);
      if (problems.length === 0) continue;
      const reason = `step function '${name}' reloaded and the ensemble no longer fits it: ${problems.join("; ")}`;
      platform.log.warn(`${e.name}: ${reason}; unloading it (fix the ensemble or the step, then load it again)`);
      e.wanted = false; // not ready until someone loads it again, as after an unload
      this.#forgetAnswers(e);
      await Promise.all(loaded.map((v) => v.unload(reason, "api")));
    }
  }

  /** The effective config of the version a step would reach now (`version` -1: the served one), if it is READY. */
  #servedConfig(name: string, version: number): FunctionConfig | undefined {
    const fn = this.#functions.get(name);
    if (!fn || (version >= 0 && !fn.versions.has(version)) || fn.versions.size === 0) return undefined;
    const v = this.pick(fn, version >= 0 ? String(version) : undefined);
    return v.state === "READY" ? v.deployment?.config : undefined;
  }

  /**
   * Drains and unloads every version of a function; it stays registered, UNAVAILABLE (cold in lazy
   * mode: wanted, so its next request loads it, unless `disable`). With
   * `dependents` (Triton's `unload_dependents`), an ensemble's step functions unload too, through
   * nested ensembles, except those another wanted ensemble still runs. Resolves with every
   * function it unloaded, `name` first.
   */
  async unload(name: string, options: { dependents?: boolean; disable?: boolean } = {}): Promise<string[]> {
    this.#checkControl(name);
    const fn = this.function(name);
    const names = [name, ...(options.dependents ? this.#stepsOnlyOf(name) : [])];
    const records = [fn, ...names.slice(1).map((n) => this.function(n))];
    for (const r of records) {
      // Lazy mode promises a function loads on its first request: an unload leaves it cold.
      r.wanted = this.#mode === "lazy" && !options.disable;
      this.#dropped(r);
    }
    await Promise.all(records.flatMap((r) => [...r.versions.values()].map((v) => v.unload())));
    return names;
  }

  /**
   * Unloads a function and forgets it, as if it had never been registered (ModelMesh's unloadModel:
   * the model's files go with it). False when no such function is registered.
   */
  async forget(name: string): Promise<boolean> {
    this.#checkControl(name);
    const fn = this.#functions.get(name);
    if (!fn) return false;
    this.#functions.delete(name);
    this.#dropped(fn);
    await Promise.all([...fn.versions.values()].map((v) => v.unload()));
    return true;
  }

  /** The functions an ensemble's steps run, by its registered config (none for other functions). */
  readonly #stepsOf = (name: string): string[] => (this.#functions.get(name)?.declared?.ensemble_scheduling?.step ?? []).map((step) => step.model_name);

  /** The functions `name`'s steps run (through nested ensembles) that no other wanted ensemble runs. */
  #stepsOnlyOf(name: string): string[] {
    const wanted = [...this.#functions.values()].filter((f) => f.wanted).map((f) => f.name);
    return stepsOnlyOf(name, wanted, this.#stepsOf, (n) => this.#functions.has(n));
  }

  /**
   * Parks a READY function now (dev tools); no-op for others. A version holding live sequences is
   * not parked (parking would end them, as it never does for idleness or room): refused, naming them.
   */
  async park(name: string): Promise<void> {
    const problem = functionNameProblem(name);
    if (problem) throw invalidArg(`invalid function name: ${problem}`);
    const versions = [...this.function(name).versions.values()];
    const held = versions.filter((v) => v.liveSequences > 0);
    if (held.length > 0) {
      throw invalidArg(`'${name}' is not parked: ${held.map((v) => `version ${v.version} holds ${v.liveSequences} live sequence(s)`).join(", ")}, which parking would end; end them (or unload it, which ends them)`);
    }
    await Promise.all(versions.map((v) => v.park()));
  }

  /**
   * Compares the repository with what is registered: new functions are registered (and loaded
   * unless lazy), removed ones drain and go, changed ones reload in the background. Poll mode
   * calls this on a timer; the dev server calls it when files change.
   */
  async poll(): Promise<void> {
    const { platform } = this.#options;
    const entries = await scanRepository(platform, this.#options.repository, { warned: this.#warned }).catch(() => undefined);
    if (!entries) return;
    const seen = new Set(entries.map((e) => e.name));
    for (const [name, fn] of this.#functions) {
      if (seen.has(name) || fn.files || fn.entry?.external) continue;
      platform.log.info(`${name}: removed from the repository; draining`);
      this.#functions.delete(name);
      this.#dropped(fn);
      await Promise.all([...fn.versions.values()].map((v) => v.unload("removed from the repository", "removed")));
    }
    for (const entry of entries) {
      const fn = this.#functions.get(entry.name);
      if (fn?.files || fn?.entry?.external) continue;
      const print = await fingerprint(platform, entry, fn?.declared?.default_model_filename ?? "model.onnx", fn?.declared?.handler !== undefined);
      if (fn && fn.fingerprint === print) continue;
      platform.log.info(`${entry.name}: ${fn ? "changed" : "new"}; ${fn ? "reloading" : "registering"}`);
      const previous = fn && new Set(fn.versions.values());
      const updated = await this.#register(entry, fn?.wanted ?? this.#mode !== "explicit");
      if (updated === fn) continue; // its new function.yaml was refused: it serves on as it was
      for (const v of updated.versions.values()) {
        if (previous?.has(v) && v.deployment) void this.#reload(updated, v).then(() => this.#recheckDependents(updated.name)).catch(() => undefined);
        else if (this.#mode !== "lazy" && updated.wanted) void v.ensureReady().catch(() => undefined);
      }
    }
  }

  /**
   * Registers `name` when the repository holds it now and it is not registered yet — lazy mode's
   * request for a folder the watcher or poll has not reported — and nothing else: what changed or
   * went elsewhere waits for the poll that looks at everything. True when `name` is registered.
   */
  async discover(name: string): Promise<boolean> {
    if (this.#functions.has(name)) return true;
    const entry = (await scanRepository(this.#options.platform, this.#options.repository, { warned: this.#warned }).catch(() => [])).find((e) => e.name === name);
    if (!entry || this.#functions.has(name)) return this.#functions.has(name);
    this.#options.platform.log.info(`${name}: new; registering (asked for before the repository was scanned again)`);
    await this.#register(entry, this.#mode !== "explicit");
    return true;
  }

  /** Cancels every load and reload in progress (a shutdown began); what serves keeps serving. */
  cancelLoads(reason: string): void {
    for (const fn of this.#functions.values()) for (const v of fn.versions.values()) v.cancelLoads(reason);
  }

  /** Drains and releases every deployment, then collects and trims once for all of them. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all([...this.#functions.values()].flatMap((fn) => [...fn.versions.values()].map((v) => v.unload("server stopping", "shutdown"))));
    this.#options.platform.collectGarbage?.();
    this.#options.platform.trimMemory?.();
  }

  /**
   * Set by stop(): the versions it releases do not each run a full collection (10–20 ms of the
   * event loop apiece, one after another: a shutdown of 16 functions spent ~0.3 s in them).
   */
  #stopping = false;

  /**
   * (Re)registers a function from its folder: parses function.yaml, picks the served versions and
   * keeps the ManagedVersion of every version that stays, so reloads can swap in place. Versions
   * no longer served are unloaded once a newer one is READY (or at once if none is loaded).
   */
  async #register(entry: FunctionEntry, wanted: boolean, override: LoadOverride = {}): Promise<FunctionRecord> {
    const { platform } = this.#options;
    const old = this.#functions.get(entry.name);
    const fn: FunctionRecord = { name: entry.name, entry, fingerprint: "", versions: new Map(), wanted, files: override.files, generation: ++this.#generations };
    let text: string | undefined;
    if (override.config) {
      fn.declared = override.config;
    } else {
      // Named relative to the repository: the issue reaches answers (readiness, 503s, the index).
      const file = `${entry.name}/${entry.configFile?.split("/").pop() ?? FUNCTION_FILE}`;
      const read = entry.configFile ? await readConfigText(platform, entry.configFile) : "";
      if (read instanceof FileRefused) {
        fn.error = `${file}: ${read.message}`;
      } else {
        text = read;
        const parsed = parseConfigFile(text, { file, name: entry.name, limits: this.#limits, anyName: entry.external });
        if (parsed.config && parsed.errors.length === 0) fn.declared = parsed.config;
        else fn.error = parsed.errors.map(formatIssue).join("; ");
        if (parsed.ignored?.length) platform.log.info(`${file}: ignoring ${parsed.ignored.join(", ")} (no effect in tensorfn)`);
      }
    }
    fn.fingerprint = await fingerprint(platform, entry, fn.declared?.default_model_filename ?? "model.onnx", fn.declared?.handler !== undefined);
    // A config written while it was read (writeFileSync and many editors truncate, then write): the
    // fingerprint is the new file's, the config the read's. Left unmatched, the next poll reads it again.
    if (text !== undefined && entry.configFile && (await readConfigText(platform, entry.configFile)) !== text) fn.fingerprint = "";
    // Likewise a function.yaml written since the scan found none: the fingerprint has it, the config
    // does not (the README tour's edit right after its first request lost it, one run in three).
    if (!override.config && !entry.configFile && (await platform.stat(`${entry.dir}/${FUNCTION_FILE}`))) fn.fingerprint = "";
    // Triton's promise for a reload, kept for configs: a function.yaml that does not parse leaves
    // the loaded registration serving (the next change is looked at again: its fingerprint moves on).
    if (fn.error && old && !old.files && [...old.versions.values()].some((v) => v.deployment)) {
      old.fingerprint = fn.fingerprint;
      old.refused = fn.error;
      platform.log.error(`${entry.name}: invalid configuration: ${fn.error}; the loaded version keeps serving until it is fixed`);
      return old;
    }
    if (old) this.#forgetAnswers(old);
    fn.limiter = this.#limiter(fn.declared, old);
    if (fn.error) platform.log.error(`${entry.name}: invalid configuration: ${fn.error}`);
    let served = fn.declared ? selectVersions(fn.declared.version_policy, entry.versions) : [];
    if (fn.declared && served.length === 0) fn.error = `no version folder to serve (found: ${entry.versions.join(", ") || "none"})`;
    const rollout = fn.declared?.rollout;
    if (rollout && !fn.error) {
      const versions = rolloutVersions(rollout, served, entry.versions);
      if ("problem" in versions) {
        fn.error = versions.problem;
        served = [];
        platform.log.error(`${entry.name}: invalid configuration: ${fn.error}`);
      } else {
        served = versions.served;
        // A share changed at run time (the rollout API) lasts while the rollout block stays as it was.
        const same = old?.rollout && JSON.stringify(old.declared?.rollout) === JSON.stringify(rollout) && old.rollout.stable === versions.stable;
        fn.rollout = same ? old.rollout : new Rollout(rollout, versions.stable, this.#options.clock.now());
      }
    }
    // A rollout replaced or gone: its shadow's copies never hold up the reload's drain.
    if (old?.rollout && old.rollout !== fn.rollout) old.rollout.shadow?.stop();
    for (const version of served) {
      const loader = this.#loaders.loader(fn, version);
      const idle = this.#idlePolicy(fn.declared!);
      const kept = old?.versions.get(version);
      if (kept) {
        // Same version: keep its state and statistics. One not in memory takes the new content
        // now; a loaded one is reloaded in place by the caller (#reload), which swaps when ready.
        if (!kept.deployment) await kept.reload(loader, idle);
        fn.versions.set(version, kept);
      } else {
        const onReleased = (droppedBytes: boolean) => {
          if (this.#stopping) return;
          // A full collection stalls the event loop 10–20 ms in a serving process: only where it frees
          // something (sessions that could not read the kept bytes in place held copies of their own).
          if (droppedBytes || !this.#loaders.readsInPlace()) platform.collectGarbage?.();
          platform.trimMemory?.();
        };
        fn.versions.set(version, new ManagedVersion(entry.name, version, { loader, idle, clock: this.#options.clock, log: platform.log, onReleased }));
      }
    }
    // The rollout's window counts its two versions' requests; a version no longer in one counts for none.
    for (const v of fn.versions.values()) v.stats.outcome = fn.rollout?.recorder(v.version);
    this.#functions.set(entry.name, fn);
    const retired = [...(old?.versions.values() ?? [])].filter((v) => fn.versions.get(v.version) !== v);
    if (retired.length > 0) void this.#retire(fn, retired);
    return fn;
  }

  /** Reloads a loaded version from the function's current files and config. */
  async #reload(fn: FunctionRecord, v: ManagedVersion): Promise<void> {
    await v.reload(this.#loaders.loader(fn, v.version), this.#idlePolicy(fn.declared!));
  }

  /** Unloads versions that left the served set, once a served version is READY (zero downtime). */
  async #retire(fn: FunctionRecord, retired: ManagedVersion[]): Promise<void> {
    const loaded = retired.some((v) => v.deployment);
    if (loaded && fn.wanted && this.#mode !== "lazy") {
      await Promise.allSettled([...fn.versions.values()].map((v) => v.ensureReady()));
    } else if (loaded && fn.wanted) {
      const newest = [...fn.versions.values()].sort((a, b) => b.version - a.version)[0];
      await newest?.ensureReady().catch(() => undefined);
    }
    await Promise.all(retired.map((v) => v.unload("no longer served by version_policy", "policy")));
  }

  /** A function unloaded, forgotten or removed: its cached answers and its handler's metric series go. */
  #dropped(fn: FunctionRecord): void {
    this.#forgetAnswers(fn);
    void this.#options.customMetrics?.remove(fn.name);
  }

  /** Drops the cached answers of one registration of a function (it was replaced, removed or unloaded). */
  #forgetAnswers(fn: FunctionRecord): void {
    this.#loaders.forgetAnswers(fn);
  }

  /** The function's rate limiter: the old one (with its buckets) when `rate_limit` did not change. */
  #limiter(declared: DeclaredConfig | undefined, old: FunctionRecord | undefined): KeyedRateLimiter | undefined {
    const limit = declared?.rate_limit;
    if (!limit) return undefined;
    if (old?.limiter && JSON.stringify(old.declared?.rate_limit) === JSON.stringify(limit)) return old.limiter;
    return new KeyedRateLimiter(limit, this.#options.clock);
  }

  #idlePolicy(declared: DeclaredConfig): IdlePolicy {
    const fallback = this.#options.idleTimeoutMs ?? (this.#mode === "lazy" ? 300_000 : 0);
    const timeoutMs = (declared.scale.min_instances ?? 0) > 0 ? 0 : (declared.scale.idle_timeout_ms ?? fallback);
    return { timeoutMs, park: declared.scale.park };
  }

  /** The repository API's preconditions: a control mode that allows it, and a valid name. */
  #checkControl(name: string): void {
    if (this.#mode === "none" || this.#mode === "poll") {
      throw invalidArg(`load and unload are not allowed in model control mode '${this.#mode}'; use explicit or lazy`);
    }
    const problem = functionNameProblem(name);
    if (problem) throw invalidArg(`invalid function name: ${problem}`);
  }
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** A function's config file as text ("" when it is gone or unreadable), or why it was not read (a FIFO, too large). */
async function readConfigText(platform: Platform, path: string): Promise<string | FileRefused> {
  try {
    return await platform.readTextFile(path, { maxBytes: CONFIG_FILE_LIMITS.bytes });
  } catch (error) {
    return error instanceof FileRefused ? error : "";
  }
}
