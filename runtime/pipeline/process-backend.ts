import { RuntimeError } from "../core/mod.ts";
import type { Clock, HandlerMetrics, Logger, MetricLabels, ProcessHandle, Tensor } from "../core/mod.ts";
import type { FunctionConfig } from "../config/mod.ts";
import type { Backend, LoadOptions, Session, SessionRunOptions } from "../backends/backend.ts";
import { plainTensors } from "../tensor/mod.ts";
import { portable } from "./process-protocol.ts";
import { processMessageProblem } from "./process-messages.ts";
import type { PendingOp } from "./process-messages.ts";
import type { HandlerCall, HandlerSpec, MetricEvent, ProcessNotice, ProcessReply, ProcessRequest } from "./process-protocol.ts";
import type { HandlerOutcome, HandlerStep } from "./handler-host.ts";

/** A request without its id (distributive, so each kind keeps its fields). */
type Call = ProcessRequest extends infer R ? (R extends ProcessRequest ? Omit<R, "id"> : never) : never;

/** The first restart waits this long, each next one twice as long, up to MAX_RESTART_DELAY_MS. */
export const FIRST_RESTART_DELAY_MS = 100;
export const MAX_RESTART_DELAY_MS = 10_000;
/** A process that lived this long was healthy: the next crash restarts it at once again. */
const HEALTHY_AFTER_MS = 30_000;
/** What a handler's own timeout (answered 504 in the process) gets before the server kills a process whose event loop does not answer. */
const WATCHDOG_GRACE_MS = 1000;
/** Retry-After for requests a crash failed: the restart is about this far off. */
const RETRY_AFTER_MS = 1000;

export interface ProcessBackendOptions {
  /** Starts the process (Platform.startProcess with the function's env and memory cap). */
  start(): ProcessHandle;
  /** "name vN", as errors and logs name it. */
  label: string;
  /** What the process hosts: the model on onnxruntime, or a `backend: handler` function's handler. */
  kind: "onnxruntime" | "handler";
  handler?: HandlerSpec;
  /** The function's effective config, once its load completed it (a handler's `ctx.config`). */
  config?: () => FunctionConfig | undefined;
  /** Told about each handler call the process made. */
  onCall?(step: HandlerStep, ms: number, outcome: HandlerOutcome): void;
  /** The function's `ctx.metrics` on the server: what the handler does with its own in the process is replayed here. */
  metrics?: HandlerMetrics;
  /** Runs another function for the handler's `ctx.infer` in the process (the server's dispatch); absent: it fails, saying so. */
  dispatch?(name: string, version: string | undefined, inputs: Record<string, Tensor>, signal: AbortSignal, outputs?: readonly string[]): Promise<Record<string, Tensor>>;
  clock: Pick<Clock, "now" | "setTimeout" | "clearTimeout">;
  log: Logger;
}

interface Running {
  handle: ProcessHandle;
  startedAt: number;
  pending: Map<number, { op: PendingOp; resolve(reply: ProcessReply & { ok: true }): void; reject(error: Error): void; timer?: unknown }>;
  /** Why it exited, once it has. */
  exited?: string;
  /** Whether the process has the function's config (handlers take it with their first run). */
  configured: boolean;
  /** Aborts the `ctx.infer` calls the server runs for it when it exits. */
  gone: AbortController;
}

/**
 * `isolation: process`: a function's instances (and its handler) in a child process of their own,
 * behind the Backend contract, so the deployment, scheduler and batcher above are the ones every
 * function has. One process per loaded version holds all its sessions. When it dies — an uncaught
 * error, a native abort, an exit, its memory cap, a handler that blocks its event loop past
 * `handler_timeout_ms` — only what it was running fails (UNAVAILABLE, naming the function and why:
 * clients retry), its sessions report `alive: false`, and the deployment's self-healing instances
 * load again through this backend: a new process, after a delay that doubles with each crash in a
 * row, from the model bytes the server keeps (counted as `restart` lifecycle events).
 */
export function createProcessBackend(options: ProcessBackendOptions): Backend {
  let running: Running | undefined;
  let starting: Promise<Running> | undefined;
  let crashes = 0;
  let next = 1;
  let open = 0;

  // The server's side of the handler's metrics, by name; a declaration the server refuses (another
  // function declared the name otherwise) is said once and its updates dropped.
  const declared = new Map<string, Record<string, (a?: MetricLabels | number, b?: number) => void> | undefined>();
  const replay = (events: readonly MetricEvent[]) => {
    for (const event of events) {
      if ("declare" in event) {
        try {
          declared.set(event.spec.name, options.metrics?.[event.declare](event.spec) as never);
        } catch (error) {
          declared.set(event.spec.name, undefined);
          options.log.warn(`${options.label}: ${(error as Error).message}`);
        }
        continue;
      }
      try {
        declared.get(event.name)?.[event.method]?.(event.labels ?? event.value, event.labels ? event.value : undefined);
      } catch (error) {
        options.log.warn(`${options.label}: ctx.metrics ${event.name}.${event.method}: ${(error as Error).message}`);
      }
    }
  };

  const fail = (why: string) => new RuntimeError("UNAVAILABLE", `function '${options.label}': its process ${why}; the requests it was running failed and it restarts`, { retryAfterMs: RETRY_AFTER_MS });

  const spawn = (): Running => {
    const handle = options.start();
    const child: Running = { handle, startedAt: options.clock.now(), pending: new Map(), configured: false, gone: new AbortController() };
    handle.onMessage((message) => {
      // The process runs the function's code, which can post on the channel too: a message that is
      // not the protocol's, or answers nothing in flight, ends it as a crash would (its requests get
      // a 503 naming why), never reaching a waiter or an answer.
      const problem = processMessageProblem(message, (id) => child.pending.get(id)?.op);
      if (problem) return handle.kill(`sent ${problem}: killed`);
      const reply = message as ProcessReply | ProcessNotice;
      if (reply.metrics) replay(reply.metrics);
      if (!("ok" in reply)) {
        if (reply.infer) void answer(child, reply.infer);
        return;
      }
      for (const call of reply.calls ?? []) options.onCall?.(...(call as HandlerCall));
      const waiter = child.pending.get(reply.id);
      if (!waiter) return;
      child.pending.delete(reply.id);
      if (waiter.timer !== undefined) options.clock.clearTimeout(waiter.timer);
      if (reply.ok) waiter.resolve(reply);
      else waiter.reject(new RuntimeError(reply.code, reply.error, reply.status === undefined ? undefined : { status: reply.status }));
    });
    handle.onExit((reason) => {
      child.exited = reason;
      child.gone.abort();
      if (running === child) running = undefined;
      const lived = options.clock.now() - child.startedAt;
      crashes = lived > HEALTHY_AFTER_MS ? 1 : crashes + 1;
      if (open > 0) options.log.warn(`${options.label}: its process ${reason}${child.pending.size ? `, failing ${child.pending.size} call(s) in flight` : ""}; restarting`);
      const error = fail(reason);
      for (const waiter of child.pending.values()) {
        if (waiter.timer !== undefined) options.clock.clearTimeout(waiter.timer);
        waiter.reject(error);
      }
      child.pending.clear();
    });
    return child;
  };

  /** Runs a handler's `ctx.infer` call for the process and posts its answer back. */
  const answer = async (child: Running, call: NonNullable<ProcessNotice["infer"]>) => {
    let message: Extract<ProcessRequest, { op: "answer" }>;
    try {
      if (!options.dispatch) throw new RuntimeError("UNSUPPORTED", `function '${options.label}': ctx.infer is not available here`);
      const outputs = await options.dispatch(call.target, undefined, call.inputs, child.gone.signal, call.outputs);
      message = { id: 0, op: "answer", call: call.call, outputs: portableTensors(outputs) };
    } catch (error) {
      const e = error as { message?: string; status?: number };
      message = { id: 0, op: "answer", call: call.call, error: e.message ?? String(error), code: error instanceof RuntimeError ? error.code : "INTERNAL", status: e.status };
    }
    if (!child.exited) child.handle.postMessage(message);
  };

  /** The live process, started (after the crash backoff) when there is none. */
  const ensure = (): Promise<Running> => {
    if (running && !running.exited) return Promise.resolve(running);
    starting ??= (async () => {
      const delay = crashes === 0 ? 0 : Math.min(FIRST_RESTART_DELAY_MS * 2 ** (crashes - 1), MAX_RESTART_DELAY_MS);
      if (delay > 0) await new Promise<void>((resolve) => options.clock.setTimeout(resolve, delay));
      running = spawn();
      return running;
    })().finally(() => (starting = undefined));
    return starting;
  };

  const call = (child: Running, request: Call, watchdogMs?: number): Promise<ProcessReply & { ok: true }> => {
    if (child.exited) return Promise.reject(fail(child.exited));
    const id = next++;
    return new Promise((resolve, reject) => {
      const waiter: { op: PendingOp; resolve: typeof resolve; reject: typeof reject; timer?: unknown } = { op: request.op, resolve, reject };
      if (watchdogMs !== undefined) {
        waiter.timer = options.clock.setTimeout(() => child.handle.kill(`did not answer within handler_timeout_ms + ${WATCHDOG_GRACE_MS} ms (a handler blocking its event loop): killed`), watchdogMs);
      }
      child.pending.set(id, waiter);
      child.handle.postMessage({ ...request, id });
    });
  };

  return {
    name: "process",
    async load(model: Uint8Array, loadOptions: LoadOptions): Promise<Session> {
      const child = await ensure();
      const reply =
        options.kind === "handler"
          ? await call(child, { op: "load", kind: "handler", options: portable(loadOptions), handler: options.handler! })
          : await call(child, { op: "load", kind: "onnxruntime", model, options: portable(loadOptions) });
      const id = reply.session!;
      const watchdogMs = options.kind === "handler" && options.handler ? options.handler.timeoutMs + WATCHDOG_GRACE_MS : undefined;
      let released = false;
      open++;
      return {
        signature: reply.signature!,
        provider: reply.provider ?? "cpu",
        fallbackReason: reply.fallbackReason,
        optionsNotApplied: reply.optionsNotApplied,
        get alive() {
          return child.exited === undefined;
        },
        run: async (feeds: Record<string, Tensor>, runOptions?: SessionRunOptions) => {
          const config = options.kind === "handler" && !child.configured ? options.config?.() : undefined;
          if (config) child.configured = true;
          const answer = await call(child, { op: "run", session: id, feeds: portableTensors(feeds), outputs: runOptions?.outputs, ...(config && { config }) }, watchdogMs);
          return answer.outputs!;
        },
        release: async () => {
          if (released) return;
          released = true;
          if (--open === 0) {
            // The version's last session: the process goes with it (a park, an unload, a reload).
            if (!child.exited) child.handle.kill("was stopped: its function unloaded");
            return;
          }
          if (!child.exited) await call(child, { op: "release", session: id }).catch(() => undefined);
        },
      };
    },
  };
}

/**
 * `tensors` as they should cross: plain objects, each array owning its memory. A view into a larger
 * buffer (a request body, a batch's slab) is copied, since the serializer would send the whole
 * buffer under it; shared memory cannot cross a process at all.
 */
export function portableTensors(tensors: Record<string, Tensor>): Record<string, Tensor> {
  const own = <T extends ArrayBufferView>(view: T): T => (view.buffer instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? view : ((view as unknown as { slice(): T }).slice()));
  const out: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(plainTensors(tensors))) {
    const data = Array.isArray(t.data) ? (t.data as ArrayBufferView[]).map((b) => (ArrayBuffer.isView(b) ? own(b) : b)) : ArrayBuffer.isView(t.data) ? own(t.data) : t.data;
    out[name] = { datatype: t.datatype, shape: [...t.shape], data } as Tensor;
  }
  return out;
}

