import { RuntimeError } from "../core/mod.ts";
import type { Clock, HandlerMetrics, Logger, Tensor } from "../core/mod.ts";
import type { FunctionConfig } from "../config/mod.ts";
import { HandlerError, reply } from "./handler-api.ts";
import type { FunctionAnswer, FunctionRequest, Handler, HandlerContext, SequenceHookEvent } from "./handler-api.ts";
import { RepeatGate, handlerStack, messageOf, repeatsNote } from "./handler-stacks.ts";
import type { HandlerEscapes } from "./handler-escapes.ts";

/** The steps of a handler, as its errors, timeouts and counters name them. */
export type HandlerStep = "import" | "initialize" | "execute" | "compute" | "preprocess" | "postprocess" | "finalize" | "sequence" | "escape";

/** How one handler call ended, for the counters. */
export type HandlerOutcome = "ok" | "error" | "timeout";

export interface HandlerHostOptions {
  name: string;
  version: number;
  /** The handler module's resolved path (inside the function's folder). */
  path: string;
  /** Imports the module afresh for `tag` (a new registration imports new code: the dev server's reload). */
  importModule(path: string, tag: string): Promise<Record<string, unknown>>;
  tag: string;
  log: Logger;
  clock: Pick<Clock, "now" | "setTimeout" | "clearTimeout">;
  /** Each call's ceiling (`handler_timeout_ms`). */
  timeoutMs: number;
  /** Told about every call: the step, how long it took, how it ended. */
  onCall?(step: HandlerStep, ms: number, outcome: HandlerOutcome): void;
  /** Runs another function with tensors (`ctx.infer`; version undefined: the served one); absent: ctx.infer refuses. */
  dispatch?(name: string, version: string | undefined, inputs: Record<string, Tensor>, signal: AbortSignal, outputs?: readonly string[]): Promise<Record<string, Tensor>>;
  /** Reads a file of the function's folder by its relative path; undefined when it is missing or lies outside. */
  readFile?(path: string): Promise<Uint8Array | undefined>;
  /**
   * Where errors that escape the handler's calls (timers, unawaited promises) are attributed: from
   * its import until close, stacks naming files under `folder` (the function's folder, resolved)
   * count as step "escape".
   */
  escapes?: { registry: HandlerEscapes; folder: string };
  /** `ctx.metrics`; absent: declaring a metric fails with a message saying so. */
  metrics?: HandlerMetrics;
}

/** `ctx.metrics` where the runtime keeps none (a handler run outside a server). */
const NO_METRICS = (name: string): HandlerMetrics => {
  const none = (): never => {
    throw new RuntimeError("UNSUPPORTED", `function '${name}': ctx.metrics is not available here`);
  };
  return { counter: none, gauge: none, histogram: none };
};

/** `ctx.infer` calls one handler may have in flight at once: a handler that calls itself without end hits this, not the memory. */
export const MAX_NESTED_CALLS = 256;

/**
 * One function version's handler module: imported on first use (never at load, so a server starts
 * without running user code), initialized once, each call bounded by `handler_timeout_ms` and its
 * failures turned into errors that name the function and the step, finalized on close. A call cut
 * off by its deadline gets its signal aborted; JavaScript cannot stop it, so code that ignores the
 * signal runs on (isolating handlers in their own threads is a later step).
 */
export class HandlerHost {
  readonly #options: HandlerHostOptions;
  readonly #closing = new AbortController();
  #config?: FunctionConfig;
  #ready?: Promise<Handler>;
  #initialized = false;
  #closed = false;
  #unregister?: () => void;
  readonly #logged = new RepeatGate();

  constructor(options: HandlerHostOptions) {
    this.#options = options;
  }

  /** The version's effective config, once its load completed it (before any call: calls come after READY). */
  useConfig(config: FunctionConfig): void {
    this.#config = config;
  }

  /** The config `useConfig` gave, if it has been. */
  get config(): FunctionConfig | undefined {
    return this.#config;
  }

  /** Runs `execute` on `requests` (one answer each, in order); `signals`: each request's client. */
  async execute(requests: FunctionRequest[], signals?: readonly (AbortSignal | undefined)[]): Promise<FunctionAnswer[]> {
    const handler = await this.#handler();
    const execute = handler.execute;
    if (typeof execute !== "function") throw this.#failure("execute", `${this.#shown} exports no execute(requests, ctx)`, "INTERNAL");
    const answers = await this.#call("execute", (ctx) => execute.call(handler, requests, ctx), { clients: signals });
    if (!Array.isArray(answers) || answers.length !== requests.length) {
      const got = Array.isArray(answers) ? `${answers.length} answers` : `a ${answers === null ? "null" : typeof answers}`;
      throw this.#failure("execute", `returned ${got} for ${requests.length} request(s); it must return an array with one answer per request`, "INTERNAL");
    }
    return answers;
  }

  /** Runs `compute`: a tensor handler's inputs → its outputs (checked by the caller against the signature). */
  async compute(inputs: Record<string, Tensor>, signals?: readonly (AbortSignal | undefined)[]): Promise<Record<string, Tensor>> {
    const handler = await this.#handler();
    const compute = handler.compute;
    if (typeof compute !== "function") throw this.#failure("compute", `${this.#shown} exports no compute(inputs, ctx), which a handler function with input and output needs`, "INTERNAL");
    const outputs = await this.#call("compute", (ctx) => compute.call(handler, inputs, ctx), { clients: signals });
    if (!outputs || typeof outputs !== "object") throw this.#failure("compute", "must return the outputs as { name: { datatype, shape, data } }", "INTERNAL");
    return outputs;
  }

  /** Whether the handler module exports `step` (imports it if need be). */
  async exports(step: "preprocess" | "execute" | "compute"): Promise<boolean> {
    return typeof (await this.#handler())[step] === "function";
  }

  /** Runs `preprocess`: the body → the model's inputs. */
  async preprocess(request: FunctionRequest): Promise<Record<string, Tensor>> {
    const handler = await this.#handler();
    const preprocess = handler.preprocess;
    if (typeof preprocess !== "function") throw this.#failure("preprocess", `${this.#shown} exports no preprocess(request, ctx), which POST /v1/functions/${this.#options.name} needs`, "INTERNAL");
    const inputs = await this.#call("preprocess", (ctx) => preprocess.call(handler, request, ctx), { clients: [request.signal] });
    if (!inputs || typeof inputs !== "object") throw this.#failure("preprocess", "must return the model's inputs as { name: { datatype, shape, data } }", "INTERNAL");
    return inputs;
  }

  /** Runs `postprocess` on the model's outputs, if the handler has one; else `undefined`. */
  async postprocess(outputs: Record<string, Tensor>, request: FunctionRequest): Promise<{ answer: FunctionAnswer } | undefined> {
    const handler = await this.#handler();
    const postprocess = handler.postprocess;
    if (typeof postprocess !== "function") return undefined;
    return { answer: await this.#call("postprocess", (ctx) => postprocess.call(handler, outputs, request, ctx), { clients: [request.signal] }) };
  }

  /** Tells the handler what happened to a sequence (`onSequence`), if it listens; a failure is logged, never thrown. */
  async sequence(event: SequenceHookEvent): Promise<void> {
    const handler = await this.#handler().catch(() => undefined);
    const hook = handler?.onSequence;
    if (typeof hook !== "function") return;
    await this.#call("sequence", (ctx) => hook.call(handler, event, ctx)).catch((error: Error) => this.#options.log.warn(error.message));
  }

  /** Finalizes the handler if it was initialized; later calls are refused. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#unregister?.();
    if (!this.#initialized || !this.#ready) return;
    const handler = await this.#ready.catch(() => undefined);
    const finalize = handler?.finalize;
    if (typeof finalize !== "function") return;
    await this.#call("finalize", (ctx) => finalize.call(handler, ctx), { ignoreClosed: true }).catch((error: Error) => this.#options.log.warn(error.message));
  }

  get #shown(): string {
    return `handler ${this.#config?.handler ?? this.#options.path}`;
  }

  #handler(): Promise<Handler> {
    if (this.#closed) return Promise.reject(new RuntimeError("UNAVAILABLE", `function '${this.#options.name}' version ${this.#options.version} is being unloaded`));
    this.#ready ??= this.#load();
    return this.#ready;
  }

  async #load(): Promise<Handler> {
    const { importModule, path, tag } = this.#options;
    const started = this.#options.clock.now();
    let module: Record<string, unknown>;
    try {
      module = await importModule(path, tag);
    } catch (error) {
      this.#ready = undefined; // a broken file may be fixed: the next call imports again
      this.#options.onCall?.("import", this.#options.clock.now() - started, "error");
      this.#logFailure("import", error);
      throw this.#failure("import", `could not import ${this.#shown}: ${messageOf(error)}`, "INTERNAL");
    }
    this.#options.onCall?.("import", this.#options.clock.now() - started, "ok");
    const escapes = this.#options.escapes;
    if (escapes && !this.#unregister && !this.#closed) {
      this.#unregister = escapes.registry.register({ name: this.#options.name, folder: escapes.folder, count: () => this.#options.onCall?.("escape", 0, "error") });
    }
    const handler = (module.default && typeof module.default === "object" ? module.default : module) as Handler;
    const initialize = handler.initialize;
    if (typeof initialize === "function") {
      try {
        await this.#call("initialize", (ctx) => initialize.call(handler, ctx));
      } catch (error) {
        this.#ready = undefined;
        throw error;
      }
    }
    this.#initialized = true;
    return handler;
  }

  /** One call, with its own signal, bounded by the timeout, timed and counted. */
  async #call<T>(step: HandlerStep, run: (ctx: HandlerContext) => T | Promise<T>, options: { ignoreClosed?: boolean; clients?: readonly (AbortSignal | undefined)[] } = {}): Promise<T> {
    const { clock, timeoutMs, onCall } = this.#options;
    const controller = new AbortController();
    const onClose = () => controller.abort(this.#closing.signal.reason);
    if (!options.ignoreClosed) this.#closing.signal.addEventListener("abort", onClose, { once: true });
    const gone = this.#whenClientsGone(options.clients, () => controller.abort(new RuntimeError("CANCELLED", `function '${this.#options.name}' ${step}: every client of this call went away`)));
    const started = clock.now();
    let timer: unknown;
    const deadline = new Promise<never>((_, reject) => {
      timer = clock.setTimeout(() => {
        const error = this.#failure(step, `took longer than handler_timeout_ms (${timeoutMs} ms)`, "DEADLINE_EXCEEDED");
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    });
    try {
      const value = await Promise.race([Promise.resolve().then(() => run(this.#context(controller.signal))), deadline]);
      onCall?.(step, clock.now() - started, "ok");
      return value;
    } catch (error) {
      const failed = error instanceof RuntimeError && error.code === "DEADLINE_EXCEEDED" ? error : this.#asError(step, error);
      onCall?.(step, clock.now() - started, failed.code === "DEADLINE_EXCEEDED" ? "timeout" : "error");
      throw failed;
    } finally {
      clock.clearTimeout(timer);
      this.#closing.signal.removeEventListener("abort", onClose);
      gone();
    }
  }

  /**
   * Calls `abort` once every one of `clients` has aborted (none may be missing: a request without
   * a signal keeps the call wanted); returns what stops listening.
   */
  #whenClientsGone(clients: readonly (AbortSignal | undefined)[] | undefined, abort: () => void): () => void {
    if (!clients || clients.length === 0 || clients.some((s) => s === undefined)) return () => {};
    const signals = clients as AbortSignal[];
    const check = () => {
      if (signals.every((s) => s.aborted)) abort();
    };
    check();
    for (const s of signals) s.addEventListener("abort", check, { once: true });
    return () => signals.forEach((s) => s.removeEventListener("abort", check));
  }

  #context(signal: AbortSignal): HandlerContext {
    const { name, version, log, clock } = this.#options;
    const config = this.#config!;
    const parameters = Object.fromEntries(Object.entries(config.parameters).map(([k, v]) => [k, v.string_value]));
    const prefix = `${name} v${version} handler: `;
    return {
      name,
      version,
      config,
      parameters,
      log: { info: (m) => log.info(prefix + m), warn: (m) => log.warn(prefix + m), error: (m) => log.error(prefix + m) },
      now: () => clock.now(),
      signal,
      error: (message, status) => new HandlerError(message, status),
      reply,
      infer: (target, inputs, options) => this.#dispatch(target, inputs, signal, options?.outputs),
      readFile: async (path) => {
        const bytes = typeof path === "string" ? await this.#options.readFile?.(path) : undefined;
        if (!bytes) throw new RuntimeError("INTERNAL", `function '${name}': ctx.readFile(${JSON.stringify(path)}) found no such file inside the function's folder`);
        return bytes;
      },
      metrics: this.#options.metrics ?? NO_METRICS(name),
    };
  }

  #nested = 0;

  async #dispatch(target: string, inputs: Record<string, Tensor>, signal: AbortSignal, outputs: readonly string[] | undefined): Promise<Record<string, Tensor>> {
    const { dispatch, name } = this.#options;
    if (!dispatch) throw new RuntimeError("UNSUPPORTED", `function '${name}': ctx.infer is not available here`);
    if (this.#nested >= MAX_NESTED_CALLS) throw new RuntimeError("UNAVAILABLE", `function '${name}': ${MAX_NESTED_CALLS} ctx.infer calls already in flight (does it call itself?)`);
    this.#nested++;
    try {
      return await dispatch(target, undefined, inputs, signal, outputs);
    } finally {
      this.#nested--;
    }
  }

  /** What a handler threw, as the client sees it: a HandlerError keeps its 4xx, anything else is a 500. */
  #asError(step: HandlerStep, error: unknown): RuntimeError {
    if (error instanceof RuntimeError && error.message.startsWith(`function '${this.#options.name}'`)) return error;
    // By name, not instanceof: a handler may import HandlerError from another copy of the module.
    const e = error as { name?: unknown; status?: unknown; message?: unknown };
    if (e && e.name === "HandlerError" && typeof e.status === "number") {
      return new RuntimeError("INVALID_ARG", `function '${this.#options.name}' ${step}: ${String(e.message)}`, { status: e.status, cause: error });
    }
    this.#logFailure(step, error);
    return this.#failure(step, `failed: ${messageOf(error)}`, "INTERNAL", error);
  }

  /**
   * A handler's own failure, for whoever runs the server: its stack (mapped to the TypeScript
   * source where the runtime maps it, paths relative to the repository) once per step and message
   * a minute, where the client gets the message alone. A batch that fails logs once.
   */
  #logFailure(step: HandlerStep, error: unknown): void {
    const { clock, log, name, version, path } = this.#options;
    const repeats = this.#logged.admit(`${step}\0${messageOf(error)}`, clock.now());
    if (repeats === undefined) return;
    const folder = this.#options.escapes?.folder ?? path.slice(0, path.lastIndexOf("/"));
    log.error(`function '${name}' v${version} ${step} failed${repeatsNote(repeats)}: ${handlerStack(error, folder)}`);
  }

  #failure(step: HandlerStep, what: string, code: "INTERNAL" | "DEADLINE_EXCEEDED", cause?: unknown): RuntimeError {
    return new RuntimeError(code, `function '${this.#options.name}' ${step}: ${what}`, { cause });
  }
}
