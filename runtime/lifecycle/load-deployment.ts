import { RuntimeError } from "../core/mod.ts";
import type { Clock, InferRequest, Tensor } from "../core/mod.ts";
import { completeConfig, embeddingOutput, handlerSignature, identitySignature } from "../config/mod.ts";
import type { DeclaredConfig, FunctionConfig, WarmupSample } from "../config/mod.ts";
import type { Backend, LoadOptions, Session } from "../backends/backend.ts";
import { warmupTensor } from "./warmup-data.ts";
import type { ModelStats } from "../metrics/mod.ts";
import type { ResourceNeeds } from "../scheduler/mod.ts";
import { Deployment } from "./deployment.ts";
import type { DeploymentOptions } from "./deployment.ts";
import { versionServices } from "./load-services.ts";
import type { LoadServices } from "./load-services.ts";
import type { PlacementMemory, Timer } from "./execution-thread.ts";
import { instancePlacements } from "./instance-placement.ts";
import { prepareRequest } from "./prepare-request.ts";
import { sequenceFeeds } from "../scheduler/mod.ts";
import { copyTensor } from "../tensor/mod.ts";
import {
  chooseThread,
  executionThreadSetting,
  inlineCandidate,
  MAIN_FIRST_MAX_BYTES,
  measureInline,
  threadParameters,
  timeFromHere,
} from "./execution-thread.ts";

export interface LoadDeploymentOptions {
  /** The declared config, with the accelerator already resolved against the server default. */
  declared: DeclaredConfig & { accelerator: NonNullable<DeclaredConfig["accelerator"]> };
  /** The file it was read from, as a contradiction with the model names it (default function.yaml). */
  configFile?: string;
  version: number;
  /** The model file's bytes (empty for the identity backend). */
  bytes: Uint8Array;
  backend: Backend;
  /** onnxruntime's options per GPU provider, from Triton's execution_accelerators. */
  providerOptions?: Record<string, Record<string, string>>;
  /** The server's clock, log, trace, rate limiter and arrivals (built once, handed down whole). */
  services: LoadServices;
  cpuCount: number;
  stats: ModelStats;
  /** Aborted by an unload: no more instances are created, those made so far are released. */
  signal?: AbortSignal;
  /**
   * Runs session creates, warm-ups and `execution_thread: auto`'s timed runs one at a time among
   * the server's loads: at start every function loads at once, and another model's create or
   * warm-up burning the cores while this one is timed counted as this model's cost (mlp's batch 64
   * measured 4–8 ms instead of 2, and `auto` sent it to a worker).
   */
  exclusive?: <T>(task: () => Promise<T>) => Promise<T>;
  /** The external data files the model names (`LoadOptions.externalData`), read from beside it. */
  externalData?: LoadOptions["externalData"];
  /** How long the warm-up may take, all samples on all instances together (`--load-timeout-secs`); unset: no bound. */
  warmupTimeoutMs?: number;
  /** The bytes of the warm-up samples' `input_data_file`s, by name (read from the function's warmup/ folder). */
  warmupFiles?: ReadonlyMap<string, Uint8Array>;
  /** The server's memory of what `auto` measured (absent: measure every load). */
  placements?: PlacementMemory;
  /** Nothing else runs on the event loop (the server starts): `auto` may time a small model there first. */
  quietLoop?: boolean;
  /** The response cache and this version's scope in it (the function enables `response_cache`). */
  cache?: DeploymentOptions["cache"];
  labels?: DeploymentOptions["labels"];
  /** The raw bytes of one sequence's first state, by state input name (`initial_state` `data_file`s). */
  initialStates?: ReadonlyMap<string, Uint8Array>;
  /** A generator's tokenizer and generation defaults (`generation`). */
  codec?: DeploymentOptions["codec"];
  /** The function's handler (its execute as the backend, or preprocess / postprocess beside the model), closed with the deployment. */
  handler?: DeploymentOptions["handler"];
  /**
   * Files for the backend's optimised form of the model (`LoadOptions.saveOptimizedTo`), given when
   * the version keeps its bytes to wake from (`park: host`): the deployment's `optimizedForm()`
   * has the backend write it and reads it back (in shared memory), for the version to keep and wake
   * from instead (resnet's wake: ~2x faster).
   */
  optimizedForm?: {
    scratch(name: string): Promise<{ path: string; remove(): Promise<void> }>;
    read(path: string): Promise<Uint8Array>;
  };
}

/**
 * Creates a version's sessions (one per instance placement), completes its config from the
 * model, runs its warm-up samples on every instance, and only then returns a Deployment: a version
 * is never READY before it has run.
 */
export async function loadDeployment(options: LoadDeploymentOptions): Promise<Deployment> {
  const { declared, version, bytes, backend, signal, services } = options;
  const { log, clock } = services;
  const exclusive = options.exclusive ?? (<T,>(task: () => Promise<T>) => task());
  // Backends without a model file: Triton's identity, and ours, a handler's execute.
  const identity = declared.backend === "identity" || declared.backend === "handler";
  const files = identity ? undefined : options.optimizedForm;
  const placements = instancePlacements(declared.instance_group, declared.accelerator);
  const initial = Math.min(declared.scale.max_instances ?? Infinity, Math.max(declared.scale.min_instances ?? 0, placements.length, 1));
  const threads = (key: string) => {
    const value = declared.parameters[key]?.string_value;
    return value === undefined ? undefined : Number(value);
  };
  const prefix = `${declared.name} v${version}`;
  const shared: Omit<LoadOptions, "accelerator"> = {
    // Instances of one deployment run concurrently: give each its share of the cores.
    intraOpThreads: threads("intra_op_thread_count") ?? Math.max(1, Math.floor(options.cpuCount / initial)),
    interOpThreads: threads("inter_op_thread_count"),
    graphLevel: declared.optimization.graph.level,
    ...(options.providerOptions && { providerOptions: options.providerOptions }),
    allowSpinning: onOff(declared.parameters.allow_spinning?.string_value),
    // Applies where the bytes are the backend's optimised form (a wake from PARKED): see docs/guides/lifecycle.md, parameters.weights_in_place.
    weightsInPlace: onOff(declared.parameters.weights_in_place?.string_value) ?? false,
    wakeUnpacked: onOff(declared.parameters.wake_unpacked?.string_value) ?? false,
    signature: declared.backend === "identity" ? identitySignature(declared) : declared.backend === "handler" ? handlerSignature(declared) : undefined,
    log: { info: (m) => log.info(`${prefix}: ${m}`), warn: (m) => log.warn(`${prefix}: ${m}`) },
    modelFile: `${declared.name}/${version}/${declared.default_model_filename}`,
    ...(options.externalData?.length && { externalData: options.externalData }),
  };
  // `auto`, for one instance that cannot scale out, loads into a worker, times the model there (its
  // own cost, not the event loop's) and moves it onto the event loop when it is cheap; bytes it
  // measured before (a wake from PARKED) load straight onto the thread it chose then.
  // A generator's step carries the whole batch's KV past as its inputs: a worker would copy it there
  // and back every token, so one instance runs on the event loop unless told otherwise; several run
  // in workers, where their steps overlap (on the event loop they would only take turns).
  const generatorThread = () => (declared.parameters.execution_thread?.string_value as "main" | "worker" | undefined) ?? (initial > 1 ? "worker" : "main");
  const setting = identity ? "worker" : declared.generation ? generatorThread() : executionThreadSetting(declared);
  if (setting === "main" && initial > 1) {
    log.warn(`${prefix}: execution_thread main with ${initial} instances: inline instances share the event loop and never overlap`);
  }
  let thread: "main" | "worker" = setting === "auto" ? "worker" : setting;
  const probing = setting === "auto" && inlineCandidate(initial, declared.scale.max_instances);
  // What a measurement holds for: this model's content, with what its cost depends on.
  const costKey = probing ? placementKey(declared, shared) : "";
  let measured = probing ? options.placements?.recall(bytes, costKey) : undefined;
  if (measured) thread = chooseThread(measured);
  // While the server starts, nothing else runs on the event loop: a model small enough to belong
  // there is created and timed there first, sparing the wait for a worker to load it; one that
  // measures too slow then moves to a worker.
  const mainFirst = probing && !measured && options.quietLoop === true && backend.workerThreads === true && bytes.byteLength <= MAIN_FIRST_MAX_BYTES;
  if (mainFirst) thread = "main";
  let next = 0;
  // What each instance needs from the rate limiter, from its placement's group.
  const needs = new WeakMap<Session, ResourceNeeds>();
  const createInstance = async () => {
    signal?.throwIfAborted();
    const { rateLimiter, ...placement } = placements[next++ % placements.length]!;
    const session = await exclusive(() => backend.load(bytes, { ...shared, ...placement, executionThread: thread }));
    if (signal?.aborted) {
      // A session that finished loading after the unload is released here, never handed out.
      await session.release();
      signal.throwIfAborted();
    }
    if (rateLimiter) needs.set(session, { ...rateLimiter, device: placement.deviceId === undefined ? "cpu" : `gpu${placement.deviceId}` });
    return session;
  };

  const sessions: Session[] = [];
  try {
    // Complete the config from the first instance, so a contradiction fails before the others load.
    sessions.push(await createInstance());
    const config: FunctionConfig = completeConfig(declared, sessions[0]!.signature, { configFile: options.configFile });
    if (config.embedding) embeddingOutput(config); // a model that is not a text encoder fails its load, naming why
    const vocab = config.generation?.model?.vocab;
    if (options.codec && vocab !== undefined && options.codec.vocabSize > vocab) {
      throw new RuntimeError("INVALID_ARG", `function '${declared.name}' (generation): tokenizer.json has ${options.codec.vocabSize} tokens but the model's logits only ${vocab}: they are not from the same model`);
    }
    options.handler?.useConfig(config);
    if (probing && !measured) {
      const session = sessions[0]!;
      const probe = config.model_warmup[0] ?? zeroSample(config);
      const feeds = (batch: number) => sampleFeeds({ ...probe, batch_size: batch }, config, backend, options.warmupFiles, options.initialStates)();
      // No worker to time it in (this runtime has none): time it here, one probe at a time.
      const time: Timer | undefined = session.time ? (f, runs) => session.time!(f, { runs }) : session.executionThread === "main" ? timeFromHere(session) : undefined;
      const measure = async () => (time ? exclusive(() => measureInline(time, config, feeds)) : undefined);
      try {
        measured = await (options.placements ? options.placements.measureOnce(bytes, costKey, measure) : measure());
      } catch (error) {
        // A model that cannot run on the probe (zeros with free dimensions as 1 where it needs real
        // input: Silero's STFT pads by reflection) still loads, where `auto` is safe: in a worker.
        if (signal?.aborted) throw error;
        const what = config.model_warmup[0] ? `its first model_warmup sample '${probe.name}'` : "zeros (variable dimensions as 1)";
        log.warn(`${prefix}: execution_thread auto: timing the model on ${what} failed (${(error as Error).message}); it runs in a worker. Give it a model_warmup sample of real input (input_data_file or data) to time it, or set parameters.execution_thread`);
        measured = undefined;
      }
      const wanted = measured ? chooseThread(measured) : "worker";
      if (wanted !== thread && (wanted === "main" ? session.executionThread === "worker" : mainFirst)) {
        thread = wanted;
        await sessions.pop()!.release();
        next = 0;
        sessions.push(await createInstance());
      }
    }
    const actual = sessions[0]!.executionThread;
    if (actual) config.parameters = { ...config.parameters, ...threadParameters(setting, actual, measured) };
    while (sessions.length < initial) sessions.push(await createInstance());
    // All samples within one bound: a count the config may set (up to --max-warmup-runs) on a model
    // slower than its author thought must still end, and say so, rather than hold a core for good.
    const deadline = clock.now() + (options.warmupTimeoutMs ?? Infinity);
    const warmup = { backend, signal, files: options.warmupFiles, initialStates: options.initialStates, clock, deadline, timeoutMs: options.warmupTimeoutMs };
    for (const sample of config.model_warmup) await exclusive(() => warmUp(sample, config, sessions, warmup));
    return new Deployment({
      config,
      version,
      sessions,
      checkInput: backend.checkInput,
      ...versionServices(services, declared.name, version, options.stats),
      createInstance,
      resources: services.resourceLimiter && { limiter: services.resourceLimiter, needsOf: (session) => needs.get(session) },
      cache: options.cache,
      labels: options.labels,
      initialStates: options.initialStates,
      codec: options.codec,
      handler: options.handler,
      // A form made for the CPU provider (ORT's): where the sessions run elsewhere there is none to make.
      optimizedForm:
        files && sessions[0]!.provider === "cpu"
          ? () => {
              const { rateLimiter: _, ...placement } = placements[0]!;
              const create = (path: string) => backend.load(bytes, { ...shared, ...placement, executionThread: "worker", saveOptimizedTo: path });
              return makeForm(files, create, (form) => measured && options.placements?.remember(form, costKey, measured));
            }
          : undefined,
    });
  } catch (error) {
    await Promise.all(sessions.map((s) => s.release()));
    await options.handler?.close(); // never imported yet: nothing runs
    throw error;
  }
}

/**
 * Has the backend write its optimised form of the model (one more session, created and released:
 * ORT writes it only while it creates one) and reads it back, its scratch file removed; `found` is
 * told of it. Rejects where the backend could not write one.
 */
async function makeForm(files: NonNullable<LoadDeploymentOptions["optimizedForm"]>, create: (path: string) => Promise<Session>, found: (form: Uint8Array) => void): Promise<Uint8Array | undefined> {
  const scratch = await files.scratch("model.ort");
  try {
    // The create fails unless ORT wrote the form.
    await (await create(scratch.path)).release();
    const form = await files.read(scratch.path);
    if (form.byteLength === 0) return undefined;
    // A wake loads the form: it recalls what the file's bytes measured.
    found(form);
    return form;
  } finally {
    await scratch.remove().catch(() => undefined);
  }
}

/** An on/off parameter (validated by the config schema): undefined when not given. */
function onOff(value: string | undefined): boolean | undefined {
  return value === undefined ? undefined : ["1", "true"].includes(value);
}

/** What a model's execution cost depends on, beside its bytes: not its name, batching or scale. */
function placementKey(declared: LoadDeploymentOptions["declared"], shared: Omit<LoadOptions, "accelerator">): string {
  const { max_batch_size, input, output, optimization, parameters, model_warmup, accelerator } = declared;
  const { intraOpThreads, interOpThreads, graphLevel, allowSpinning } = shared;
  return JSON.stringify({ max_batch_size, input, output, optimization, parameters, probe: model_warmup[0], accelerator, intraOpThreads, interOpThreads, graphLevel, allowSpinning });
}

/**
 * Runs one warm-up sample `count` times (at least once) on every instance. Each run gets fresh
 * feeds: a worker-backed session takes ownership of (transfers) its inputs' buffers, so feeds
 * reused after the first run would be detached.
 */
async function warmUp(
  sample: WarmupSample,
  config: FunctionConfig,
  sessions: Session[],
  options: { backend: Backend; signal?: AbortSignal; files?: ReadonlyMap<string, Uint8Array>; initialStates?: ReadonlyMap<string, Uint8Array>; clock: Clock; deadline: number; timeoutMs?: number },
): Promise<void> {
  const feeds = sampleFeeds(sample, config, options.backend, options.files, options.initialStates);
  const runs = Math.max(1, sample.count);
  for (const [n, session] of sessions.entries()) {
    for (let i = 0; i < runs; i++) {
      options.signal?.throwIfAborted();
      if (options.clock.now() > options.deadline) {
        throw new RuntimeError("INVALID_ARG", `model_warmup did not finish within ${options.timeoutMs! / 1000} s (--load-timeout-secs): sample '${sample.name}' had run ${i} of ${runs} times on instance ${n + 1} of ${sessions.length}; lower its count`);
      }
      await session.run(feeds()).catch((error: Error) => {
        throw new RuntimeError("INVALID_ARG", `model_warmup '${sample.name}' failed: ${error.message}`);
      });
    }
  }
}

/** Fresh feeds for one sample per call (a worker takes ownership of the buffers it is sent). */
function sampleFeeds(sample: WarmupSample, config: FunctionConfig, backend: Backend, files?: ReadonlyMap<string, Uint8Array>, initialStates?: ReadonlyMap<string, Uint8Array>): () => Record<string, Tensor> {
  const batching = config.max_batch_size > 0;
  const inputs = Object.entries(sample.inputs).map(([name, input]) => {
    const shape = batching ? [sample.batch_size, ...input.dims] : [...input.dims];
    return { name, tensor: warmupTensor(sample.name, name, input, shape, files) };
  });
  return () => {
    const request: InferRequest = { parameters: {}, inputs: inputs.map(({ name, tensor }) => ({ name, tensor: copyTensor(tensor) })) };
    try {
      const feeds = prepareRequest(request, config, backend.checkInput).feeds;
      // A sequence model also takes its states (initial), controls (a start) and shared inputs.
      return config.sequence_batching ? { ...feeds, ...sequenceFeeds(config, batching ? sample.batch_size : 1, initialStates) } : feeds;
    } catch (error) {
      throw new RuntimeError("INVALID_ARG", `model_warmup '${sample.name}': ${(error as Error).message}`);
    }
  };
}

/** Zero inputs of batch 1 (variable dims as 1), for `auto` when the function has no warm-up sample. */
function zeroSample(config: FunctionConfig): WarmupSample {
  const inputs = Object.fromEntries(
    config.input.filter((t) => !t.optional).map((t) => [t.name, { data_type: t.data_type, dims: t.dims.map((d) => (d < 0 ? 1 : d)), zero_data: true }]),
  );
  return { name: "execution_thread probe", batch_size: 1, count: 1, inputs };
}

