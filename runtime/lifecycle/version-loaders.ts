// Over 400 lines: one loader per function kind (a model, a handler in-process or in its own process,
// an ensemble, a generator's tokenizer), sharing the reading of bytes, the budgets and the cache's scope.
import { formatCompileProblem, RuntimeError } from "../core/mod.ts";
import type { Platform } from "../core/mod.ts";
import { computesTensors, DEFAULT_HANDLER_TIMEOUT_MS, MAX_HANDLER_FILE_BYTES, parseCores, providerOptions, resolveInside, tritonAccelerator } from "../config/mod.ts";
import type { LoadLimits } from "../config/mod.ts";
import type { ResponseCache } from "../cache/mod.ts";
import { createHandlerBackend, createProcessBackend, HandlerHost } from "../pipeline/mod.ts";
import type { HandlerOutcome, HandlerStep } from "../pipeline/mod.ts";
import { isOrtFormat } from "../backends/mod.ts";
import type { Backend } from "../backends/mod.ts";
import { folderReader, readExternalData, readModelFile, readNamedFile, uploadedReader } from "../repository/mod.ts";
import type { ExternalDataFile, FolderReader } from "../repository/mod.ts";
import { byteSize, fromConfigType, loadTokenCodec } from "../tensor/mod.ts";
import type { TokenCodec, TokenizerFiles } from "../tensor/mod.ts";
import { PlacementMemory } from "./execution-thread.ts";
import type { FunctionRecord, FunctionRegistryOptions } from "./function-registry.ts";
import { loadDeployment } from "./load-deployment.ts";
import { DEFAULT_LOAD_TIMEOUT_MS } from "./load-timeout.ts";
import { loadEnsembleDeployment } from "./load-ensemble.ts";
import { sharedBytes } from "./managed-version.ts";
import type { ManagedVersion, VersionLoader } from "./managed-version.ts";
import type { ModelStats } from "../metrics/mod.ts";
import type { LoadServices } from "./load-services.ts";
import { estimateFootprint } from "./pool-manager.ts";
import type { PoolManager } from "./pool-manager.ts";
import { serially } from "./serially.ts";

/** One warm-up file's ceiling: a sample is one row of the batch (the element ceiling bounds the rest). */
const MAX_WARMUP_FILE_BYTES = 64 * 1024 * 1024;
/** A tokenizer file's ceiling: the largest tokenizer.json on the Hub (~30 MB, 250k-token vocabularies) with room. */
const MAX_TOKENIZER_FILE_BYTES = 64 * 1024 * 1024;
/** A label file's ceiling: ~1 M labels of 16 bytes, as Triton caps a classified output at 1 M classes. */
const MAX_LABEL_FILE_BYTES = 16 * 1024 * 1024;

/** What the loader factory needs: the registry's options, plus what the registry knows of all its functions. */
export interface VersionLoadersOptions extends FunctionRegistryOptions {
  limits: LoadLimits;
  /** Present when budgets are set: a load waits there for room. */
  pool?: PoolManager;
  /** Every registered version, for the pool to choose what to park or evict. */
  versions: () => ManagedVersion[];
  /** A path of ensemble steps from `name` back to itself, by the registered configs (ensemble-graph.ts). */
  includesItself: (name: string) => string[] | undefined;
  /** True while the server starts: it serves no request yet, so nothing else runs on the event loop. */
  starting?: () => boolean;
}

/**
 * The loader factory, after Triton's backend loading: how each registered version reads its bytes
 * (the repository, or a load-API upload) and builds its deployment — sessions through a backend,
 * a handler's host, an ensemble's steps — under the memory budgets, with session creates and
 * `execution_thread: auto` probes one at a time, and the response cache scoped per registration.
 */
export class VersionLoaders {
  readonly #options: VersionLoadersOptions;
  /** Session creates and `execution_thread: auto` probes, one at a time (see LoadDeploymentOptions.exclusive). */
  readonly #loadWork = serially();
  /** What `execution_thread: auto` measured, by model content (see PlacementMemory). */
  readonly #placements = new PlacementMemory();
  /** Registrations whose handler compiled (a reload registers a new record). */
  readonly #compiled = new WeakSet<FunctionRecord>();
  #inPlace?: boolean;
  /** What every load shares, built once from the server's options. */
  readonly #services: LoadServices;

  constructor(options: VersionLoadersOptions) {
    this.#options = options;
    const { clock, platform, trace, resourceLimiter, arrivals } = options;
    this.#services = { clock, log: platform.log, trace, resourceLimiter, arrivals };
  }

  /** Drops the cached answers of one registration of a function (it was replaced, removed or unloaded). */
  forgetAnswers(fn: FunctionRecord): void {
    this.#options.responseCache?.invalidate(cacheScope(fn.name, fn.generation, ""));
  }

  /** The response cache for this version, when its config enables it and the server has one (said once per load otherwise). */
  #cacheFor(fn: FunctionRecord, version: number): { store: ResponseCache; scope: string } | undefined {
    if (!fn.declared?.response_cache?.enable) return undefined;
    const store = this.#options.responseCache;
    if (!store) {
      this.#options.platform.log.warn(`${fn.name} v${version}: response_cache is enabled but the server has no cache (start it with --cache-size); answering without one`);
      return undefined;
    }
    return { store, scope: cacheScope(fn.name, fn.generation, String(version)) };
  }

  /** How the version `version` of `fn` (as registered now) reads its bytes and builds its deployment. */
  loader(fn: FunctionRecord, version: number): VersionLoader {
    const { platform, backends } = this.#options;
    const declared = fn.declared!;
    return {
      readBytes: async () => {
        if (!hasModelFile(declared.backend)) return new Uint8Array();
        const model = this.#modelFile(fn, version);
        return await readModelFile(model.read, model.relative, model.shown);
      },
      load: async (bytes, { stats, signal, optimize }) => {
        if (declared.backend === "ensemble") return await this.#loadEnsemble(fn, version, stats, await this.#labels(fn));
        // A handler's host lives as long as this deployment: `execute` as its backend, or preprocess / postprocess beside the model.
        const handler = declared.handler ? await this.#handlerHost(fn, version, stats) : undefined;
        const placed = this.#hostPolicy(fn);
        const backend = declared.isolation?.mode === "process"
          ? await this.#processBackend(fn, version, stats, handler, placed)
          : declared.backend === "handler"
            ? createHandlerBackend(handler!, { tensors: computesTensors(declared), batching: (declared.max_batch_size ?? 0) > 0, name: fn.name })
            : backends[declared.backend];
        if (!backend) throw new RuntimeError("INVALID_ARG", `backend '${declared.backend}' is not available`);
        // Our `accelerator`, else Triton's execution_accelerators, else the server's --accelerator.
        const resolved = { ...declared, accelerator: declared.accelerator ?? tritonAccelerator(declared.optimization.execution_accelerators) ?? this.#options.accelerator ?? "auto" };
        const accelerators = declared.optimization.execution_accelerators;
        const gpuOptions = accelerators && providerOptions(accelerators, fn.entry && (await platform.realPath(fn.entry.dir)));
        const warmupFiles = await this.#warmupFiles(fn);
        const labels = await this.#labels(fn);
        const initialStates = await this.#initialStates(fn);
        const codec = declared.generation || declared.embedding ? await this.#tokenCodec(fn, version) : undefined;
        const externalData = await this.#externalData(fn, version, bytes);
        const load = () =>
          loadDeployment({
            externalData,
            warmupTimeoutMs: this.#options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS,
            codec,
            warmupFiles,
            labels,
            initialStates,
            declared: resolved,
            configFile: fn.entry?.configFile?.split("/").pop(),
            version,
            bytes,
            backend,
            providerOptions: gpuOptions,
            services: this.#services,
            // A pinned process's sessions share its cores, not the machine's.
            cpuCount: placed?.cores?.length ?? platform.cpuCount(),
            stats,
            signal,
            exclusive: this.#loadWork,
            placements: this.#placements,
            quietLoop: this.#options.starting?.() ?? false,
            cache: this.#cacheFor(fn, version),
            handler,
            // Not under a memory budget: the session that makes the form would hold memory the budget does not see.
            optimizedForm: optimize && platform.scratchPath && !this.#options.pool && this.readsInPlace() ? { scratch: platform.scratchPath, read: (path) => readShared(platform, path) } : undefined,
          });
        if (!this.#options.pool) return await load();
        const size = externalData.reduce((n, f) => n + f.data.byteLength, bytes.byteLength);
        return await this.#options.pool.withRoom({ name: fn.name, version }, estimateFootprint(resolved, size), this.#options.versions(), load);
      },
    };
  }

  /**
   * Where a version's model file is read — the upload's files, a pulled model's one file, or the
   * function's folder (`relative` its path there; `shown` names it) — and where its external data
   * is read: `beside`, the version's own folder, with the model's path inside it.
   */
  #modelFile(fn: FunctionRecord, version: number): { read: FolderReader; relative: string; shown: string; beside: { read: FolderReader; relative: string } } {
    const name = fn.declared!.default_model_filename;
    const uploaded = fn.files?.get(version);
    if (uploaded) {
      const read = uploadedReader(uploaded);
      return { read, relative: name, shown: `${fn.name}/${version}/${name}`, beside: { read, relative: name } };
    }
    const { platform } = this.#options;
    const entry = fn.entry!;
    const shared = { shared: true };
    const read = folderReader(platform, entry.dir, shared);
    if (entry.modelFile) return { read, relative: entry.modelFile, shown: `${fn.name}/${entry.modelFile}`, beside: { read, relative: entry.modelFile } };
    return { read, relative: `${version}/${name}`, shown: `${fn.name}/${version}/${name}`, beside: { read: folderReader(platform, `${entry.dir}/${version}`, shared), relative: name } };
  }

  /**
   * The external data files an ONNX model names, read from its version folder (or the upload) at
   * each load: kept bytes that are the model's optimised form (ORT format) hold their weights inline.
   */
  async #externalData(fn: FunctionRecord, version: number, bytes: Uint8Array): Promise<ExternalDataFile[]> {
    if (!hasModelFile(fn.declared!.backend) || bytes.byteLength === 0 || isOrtFormat(bytes)) return [];
    const { beside, shown } = this.#modelFile(fn, version);
    return await readExternalData(beside.read, bytes, beside.relative, shown);
  }

  /**
   * Whether sessions here read kept bytes in place (the adapter's plain view over shared memory: the
   * native addon). A session reads an optimised form for its whole life: without such a view each
   * would hold a copy of it, so the form is kept only with one.
   */
  readsInPlace(): boolean {
    if (this.#inPlace === undefined) {
      try {
        this.#inPlace = this.#options.platform.plainView?.(new Uint8Array(new SharedArrayBuffer(1))) !== undefined;
      } catch {
        this.#inPlace = false;
      }
    }
    return this.#inPlace;
  }

  /**
   * `isolation: process`: a backend that runs this load's instances (or, for `backend: handler`, its
   * handler — `handler` stays here only for its config and its close) in a process of their own,
   * with the function's environment and memory cap.
   */
  async #processBackend(fn: FunctionRecord, version: number, stats: ModelStats, handler: HandlerHost | undefined, placed: PlacedPolicy | undefined): Promise<Backend> {
    const { platform, clock } = this.#options;
    const declared = fn.declared!;
    const isolation = declared.isolation!;
    if (!platform.startProcess) throw new RuntimeError("UNSUPPORTED", `function '${fn.name}': isolation: process needs a runtime that can start processes; this one cannot`);
    const label = `${fn.name} v${version}`;
    const start = () => platform.startProcess!({ label, env: isolation.env, maxMemoryBytes: isolation.max_memory, ...(placed?.cores && { cpuCores: placed.cores }), ...(placed?.numaNode !== undefined && { numaNode: placed.numaNode }) });
    const common = { start, label, clock, log: platform.log, onCall: (step: HandlerStep, ms: number, outcome: HandlerOutcome) => stats.handlerCall(step, ms, outcome) };
    if (declared.backend !== "handler") return createProcessBackend({ ...common, kind: "onnxruntime" });
    const path = await this.#handlerFile(fn);
    const folder = await platform.realPath(fn.entry!.dir);
    if (!folder) throw new RuntimeError("INVALID_ARG", `function '${fn.name}': its folder is gone`);
    return createProcessBackend({
      ...common,
      kind: "handler",
      handler: { name: fn.name, version, path, folder, tag: String(fn.generation), timeoutMs: declared.handler_timeout_ms ?? DEFAULT_HANDLER_TIMEOUT_MS, tensors: computesTensors(declared), batching: (declared.max_batch_size ?? 0) > 0 },
      config: () => handler?.config,
      metrics: await this.#customMetrics(fn.name),
      dispatch: this.#options.dispatch,
    });
  }

  /**
   * The host policy the function's instance groups name (one, checked with the config), resolved:
   * a server `--host-policy` by name, or the group's own. INVALID_ARG for a name the server lacks
   * or a core it does not have.
   */
  #hostPolicy(fn: FunctionRecord): PlacedPolicy | undefined {
    const at = fn.declared!.instance_group.findIndex((g) => g.host_policy !== undefined);
    if (at < 0) return undefined;
    const named = fn.declared!.instance_group[at]!.host_policy!;
    const field = `instance_group[${at}].host_policy`;
    const policies = this.#options.hostPolicies ?? {};
    const policy = typeof named === "string" ? policies[named] : named;
    if (!policy) {
      const known = Object.keys(policies);
      throw new RuntimeError("INVALID_ARG", `function '${fn.name}': ${field} '${named}' is not a policy of this server (${known.length ? `it has ${known.join(", ")}` : "it has none: start it with --host-policy <name>,cpu-cores=<list>"})`);
    }
    const cores = policy.cpu_cores === undefined ? undefined : parseCores(policy.cpu_cores);
    const count = this.#options.platform.cpuCount();
    const missing = cores?.filter((c) => c >= count);
    if (missing?.length) {
      const shown = missing.length > 8 ? `${missing.slice(0, 8).join(", ")} … (${missing.length} in all)` : missing.join(", ");
      throw new RuntimeError("INVALID_ARG", `function '${fn.name}': ${field} names core${missing.length > 1 ? "s" : ""} ${shown}, and this machine has cores 0-${count - 1}`);
    }
    return { ...(cores && { cores }), ...(policy.numa_node !== undefined && { numaNode: policy.numa_node }) };
  }

  /** The real path of a function's handler: inside its folder (symlinks followed), a regular file. */
  async #handlerFile(fn: FunctionRecord): Promise<string> {
    const { platform } = this.#options;
    const handler = fn.declared!.handler!;
    const path = fn.entry && (await resolveInside(platform, fn.entry.dir, handler));
    if (!path) throw new RuntimeError("INVALID_ARG", `function '${fn.name}': handler ${handler} was not found inside the function's folder`);
    // The compiler and the import would wait on a FIFO for a writer.
    if (!(await platform.stat(path))?.isFile) throw new RuntimeError("INVALID_ARG", `function '${fn.name}': handler ${handler} is not a regular file`);
    return path;
  }

  /**
   * The handler of a function's next deployment: a HandlerHost over the handler file, which must
   * resolve inside the function's folder (symlinks followed) and compile, imported on its first
   * call under this registration's tag, so a reload runs the new code.
   */
  async #handlerHost(fn: FunctionRecord, version: number, stats: ModelStats): Promise<HandlerHost> {
    const { platform, clock } = this.#options;
    const declared = fn.declared!;
    if (!platform.importModule) throw new RuntimeError("UNSUPPORTED", `function '${fn.name}': this runtime cannot import handlers`);
    const path = await this.#handlerFile(fn);
    // Compiled, not run, at load: code that does not compile fails this load, so a reload keeps
    // the version that serves now instead of replacing it with one that fails every call.
    // Once per registration: a wake from PARKED imports the same code and need not pay esbuild again.
    if (!this.#compiled.has(fn)) {
      const problems = (await platform.checkModule?.(path, fn.entry!.dir)) ?? [];
      if (problems.length > 0) {
        throw new RuntimeError("INVALID_ARG", `function '${fn.name}': handler does not compile: ${problems.slice(0, 3).map((p) => formatCompileProblem({ ...p, file: `${fn.name}/${p.file}` })).join("; ")}${problems.length > 3 ? ` (and ${problems.length - 3} more)` : ""}`);
      }
      this.#compiled.add(fn);
    }
    const folder = this.#options.escapes && fn.entry && (await platform.realPath(fn.entry.dir));
    return new HandlerHost({
      name: fn.name,
      version,
      path,
      importModule: platform.importModule,
      tag: String(fn.generation),
      log: platform.log,
      clock,
      timeoutMs: declared.handler_timeout_ms ?? DEFAULT_HANDLER_TIMEOUT_MS,
      onCall: (step, ms, outcome) => stats.handlerCall(step, ms, outcome),
      dispatch: this.#options.dispatch,
      escapes: folder ? { registry: this.#options.escapes!, folder } : undefined,
      metrics: await this.#customMetrics(fn.name),
      readFile: async (relative) => (fn.entry ? await folderReader(platform, fn.entry.dir)(relative, { maxBytes: MAX_HANDLER_FILE_BYTES }) : undefined),
    });
  }

  /**
   * The bytes of the warm-up samples' `input_data_file`s (Triton's), from the function's warmup/
   * folder and nowhere else (symlinks followed must stay inside it); a file larger than any sample
   * could use is refused before it is read. Once per registration, as the handler's compile check:
   * a wake from PARKED warms up on the same bytes.
   */
  readonly #warmupFiles = oncePerRegistration((fn) => this.#readWarmupFiles(fn));

  async #readWarmupFiles(fn: FunctionRecord): Promise<Map<string, Uint8Array> | undefined> {
    const wanted = new Set(fn.declared!.model_warmup.flatMap((s) => Object.values(s.inputs).flatMap((i) => (i.input_data_file === undefined ? [] : [i.input_data_file]))));
    if (wanted.size === 0 || !fn.entry) return undefined;
    const files = new Map<string, Uint8Array>();
    for (const name of wanted) {
      files.set(name, await this.#folderFile(fn, { folder: "warmup", what: "model_warmup input_data_file", name, maxBytes: MAX_WARMUP_FILE_BYTES, ceiling: "for one sample" }));
    }
    return files;
  }

  /**
   * The classification labels of the outputs that name a `label_filename`: each file read from the
   * function's folder (symlinks followed must stay inside it), one label per line, once per
   * registration as the warm-up files.
   */
  readonly #labels = oncePerRegistration((fn) => this.#readLabels(fn));

  async #readLabels(fn: FunctionRecord): Promise<Map<string, readonly string[]> | undefined> {
    const named = fn.declared!.output.filter((o) => o.label_filename);
    if (named.length === 0 || !fn.entry) return undefined;
    const labels = new Map<string, readonly string[]>();
    const decoder = new TextDecoder();
    for (const { name, label_filename: file } of named) {
      const lines = decoder.decode(await this.#folderFile(fn, { folder: "", what: `output '${name}' label_filename`, name: file!, maxBytes: MAX_LABEL_FILE_BYTES, ceiling: "for a label file" })).split("\n");
      if (lines.at(-1) === "") lines.pop(); // the newline that ends the last label
      labels.set(name, lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l)));
    }
    return labels;
  }

  /**
   * The bytes of the sequence states' `initial_state` `data_file`s (Triton's), from the function's
   * initial_state/ folder and nowhere else, each exactly one sequence's state in size; once per registration.
   */
  readonly #initialStates = oncePerRegistration((fn) => this.#readInitialStates(fn));

  async #readInitialStates(fn: FunctionRecord): Promise<Map<string, Uint8Array> | undefined> {
    const states = (fn.declared!.sequence_batching?.state ?? []).filter((s) => s.initial_state[0]?.data_file);
    if (states.length === 0 || !fn.entry) return undefined;
    const files = new Map<string, Uint8Array>();
    for (const s of states) {
      const name = s.initial_state[0]!.data_file!;
      const expected = s.dims.reduce((a, b) => a * b, 1) * byteSize(fromConfigType(s.data_type));
      const wrongSize = (size: number) => (size !== expected ? `; one sequence's ${s.data_type} ${JSON.stringify(s.dims)} state is ${expected}` : undefined);
      files.set(s.input_name, await this.#folderFile(fn, { folder: "initial_state", what: `state '${s.input_name}' initial_state data_file`, name, maxBytes: expected, ceiling: `(one sequence's ${s.data_type} ${JSON.stringify(s.dims)} state)`, check: wrongSize }));
    }
    return files;
  }

  /**
   * A file a config names in the function's folder (`folder` "") or one of its subfolders, where
   * symlinks followed must stay; a regular file of at most `maxBytes`, refused before it is read;
   * `check` refuses its size after (saying why, after the size).
   */
  async #folderFile(fn: FunctionRecord, file: { folder: string; what: string; name: string; maxBytes: number; ceiling: string; check?: (size: number) => string | undefined }): Promise<Uint8Array> {
    const where = file.folder ? `the function's ${file.folder}/ folder` : "the function's folder";
    const shown = `function '${fn.name}': ${file.what} '${file.name}'`;
    const read = folderReader(this.#options.platform, file.folder ? `${fn.entry!.dir}/${file.folder}` : fn.entry!.dir);
    const bytes = await readNamedFile(read, file.name, shown, file);
    if (bytes === undefined) throw new RuntimeError("INVALID_ARG", `${shown} was not found in ${where}`);
    const problem = file.check?.(bytes.byteLength);
    if (problem) throw new RuntimeError("INVALID_ARG", `${shown} is ${bytes.byteLength} bytes${problem}`);
    return bytes;
  }

  /** `ctx.metrics` for a handler, prom-client loaded with the first one. */
  async #customMetrics(name: string) {
    const metrics = this.#options.customMetrics;
    await metrics?.load();
    return metrics?.forFunction(name);
  }

  /**
   * A generator's tokenizer, chat template and generation defaults: the files a Hugging Face export
   * carries beside its model, read from the version's folder (tokenizer.json required).
   */
  async #tokenCodec(fn: FunctionRecord, version: number): Promise<TokenCodec> {
    const { platform } = this.#options;
    const files: Partial<TokenizerFiles> = {};
    const text = new TextDecoder();
    const read = folderReader(platform, `${fn.entry?.dir}/${version}`);
    for (const name of ["tokenizer.json", "tokenizer_config.json", "generation_config.json", "config.json"] as const) {
      const bytes = fn.entry && (await readNamedFile(read, name, `function '${fn.name}': ${version}/${name}`, { maxBytes: MAX_TOKENIZER_FILE_BYTES }));
      if (bytes === undefined) {
        if (name === "tokenizer.json") throw new RuntimeError("INVALID_ARG", `function '${fn.name}': ${version}/tokenizer.json was not found; a generator or an encoder needs its tokenizer beside the model, as a Hugging Face export has it`);
        continue;
      }
      files[name] = text.decode(bytes);
    }
    try {
      return await loadTokenCodec(files as TokenizerFiles);
    } catch (error) {
      throw new RuntimeError("INVALID_ARG", `function '${fn.name}' v${version}: ${(error as Error).message}`);
    }
  }

  async #loadEnsemble(fn: FunctionRecord, version: number, stats: ModelStats, labels: Map<string, readonly string[]> | undefined) {
    const { dispatch, lookup } = this.#options;
    if (!dispatch || !lookup) throw new RuntimeError("UNSUPPORTED", `ensemble '${fn.name}': this server cannot run ensembles`);
    const loop = this.#options.includesItself(fn.name);
    // Loading it would wait for a step that waits for it: refuse at once instead of at the load timeout.
    if (loop) throw new RuntimeError("INVALID_ARG", `ensemble '${fn.name}' includes itself: ${loop.join(" → ")}`);
    return await loadEnsembleDeployment({
      declared: { ...fn.declared!, accelerator: fn.declared!.accelerator ?? "auto" },
      version,
      services: this.#services,
      stats,
      cache: this.#cacheFor(fn, version),
      labels,
      dispatch,
      lookup,
      outputRatio: this.#options.limits.ensembleOutputRatio,
    });
  }
}

/** Backends that load a model file (the others take their signature from the config). */
function hasModelFile(backend: string): boolean {
  return backend !== "identity" && backend !== "handler" && backend !== "ensemble";
}

/** A file's bytes in shared memory: read there where the platform can, else read and copied. */
async function readShared(platform: Platform, path: string): Promise<Uint8Array> {
  return platform.readSharedFile ? await platform.readSharedFile(path) : sharedBytes(await platform.readFile(path));
}

/** A version's scope in the response cache; `version` "" gives the prefix of every version of that registration. */
function cacheScope(name: string, generation: number, version: string): string {
  return `${name}\u0001${generation}\u0001${version}`;
}

/**
 * `read` once per registration of a function (a wake from PARKED, each served version reuse it);
 * one that fails is read again next time (a file fixed since).
 */
function oncePerRegistration<T>(read: (fn: FunctionRecord) => Promise<T>): (fn: FunctionRecord) => Promise<T> {
  const cache = new WeakMap<FunctionRecord, Promise<T>>();
  return (fn) => {
    let result = cache.get(fn);
    if (!result) {
      result = read(fn);
      cache.set(fn, result);
      result.catch(() => cache.delete(fn));
    }
    return result;
  };
}

/** A host policy as a load applies it: the cores, the NUMA node. */
interface PlacedPolicy {
  cores?: number[];
  numaNode?: number;
}
