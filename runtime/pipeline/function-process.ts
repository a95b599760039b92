import { RuntimeError, systemClock } from "../core/mod.ts";
import type { HandlerMetrics, MetricLabels, Platform, Tensor } from "../core/mod.ts";
import { MAX_HANDLER_FILE_BYTES, resolveInside } from "../config/mod.ts";
import type { Backend, Session } from "../backends/backend.ts";
import { createHandlerBackend } from "./handler-backend.ts";
import { HandlerHost } from "./handler-host.ts";
import { portableTensors } from "./process-backend.ts";
import type { HandlerCall, HandlerSpec, MetricEvent, ProcessNotice, ProcessReply, ProcessRequest } from "./process-protocol.ts";

/** How long a metric update made outside any call waits before it goes to the server on its own. */
const METRICS_FLUSH_MS = 1000;

/** The process's side of its channel to the server (an adapter's IPC). */
export interface ProcessChannel {
  post(message: unknown): void;
  onMessage(handler: (message: unknown) => void): void;
}

/**
 * The child of `isolation: process` (process-backend.ts is the server's side): loads the sessions
 * the server asks for — the model on onnxruntime-node, computing on this process's own event loop,
 * or the function's handler — and runs them. Nothing here guards against the function: an error
 * that escapes, an exit, an abort end this process, and the server restarts it.
 */
export function serveFunctionProcess(platform: Platform, channel: ProcessChannel, options: { metrics?: (fn: string) => HandlerMetrics } = {}): void {
  const sessions = new Map<number, Session>();
  let nextSession = 1;
  let onnxruntime: Promise<Backend> | undefined;
  let handler: { host: HandlerHost; backend: Backend } | undefined;
  let calls: HandlerCall[] = [];
  // The handler's ctx.infer calls the server is running, by number.
  const calling = new Map<number, { resolve(outputs: Record<string, Tensor>): void; reject(error: Error): void }>();
  let nextCall = 1;
  const takeCalls = () => {
    if (calls.length === 0) return undefined;
    const taken = calls;
    calls = [];
    return taken;
  };
  let events: MetricEvent[] = [];
  let flush: ReturnType<typeof setTimeout> | undefined;
  const takeEvents = () => {
    if (events.length === 0) return undefined;
    const taken = events;
    events = [];
    return taken;
  };
  // Updates made outside any call (a handler's timer) go on their own, at most once a second.
  const queued = () => {
    flush ??= setTimeout(() => {
      flush = undefined;
      const metrics = takeEvents();
      if (metrics) channel.post({ id: 0, metrics } satisfies ProcessNotice);
    }, METRICS_FLUSH_MS);
  };
  const reply = (message: ProcessReply) => channel.post(message);

  const handlerOf = (spec: HandlerSpec) => {
    if (!platform.importModule) throw new RuntimeError("UNSUPPORTED", `function '${spec.name}': this runtime cannot import handlers`);
    const host = new HandlerHost({
      ...spec,
      importModule: platform.importModule,
      log: platform.log,
      clock: systemClock,
      onCall: (step, ms, outcome) => void calls.push([step, ms, outcome]),
      readFile: async (relative) => {
        const file = await resolveInside(platform, spec.folder, relative);
        return file === undefined ? undefined : await platform.readFile(file, { maxBytes: MAX_HANDLER_FILE_BYTES });
      },
      // ctx.infer: the server runs the call (its queues, batchers and the other functions are there).
      dispatch: (target, _version, inputs, signal, outputs) =>
        new Promise((resolve, reject) => {
          signal.throwIfAborted();
          const call = nextCall++;
          calling.set(call, { resolve, reject });
          channel.post({ id: 0, infer: { call, target, inputs: portableTensors(inputs), outputs } } satisfies ProcessNotice);
        }),
      metrics: options.metrics && recordingMetrics(options.metrics(spec.name), (event) => (events.push(event), queued())),
    });
    return { host, backend: createHandlerBackend(host, { tensors: spec.tensors, batching: spec.batching, name: spec.name }) };
  };

  const handle = async (m: Exclude<ProcessRequest, { op: "answer" }>): Promise<ProcessReply> => {
    switch (m.op) {
      case "load": {
        let session: Session;
        if (m.kind === "onnxruntime") {
          onnxruntime ??= import("../backends/onnxruntime-node-backend.ts").then(({ createOnnxRuntimeNodeBackend }) => createOnnxRuntimeNodeBackend({ plainView: platform.plainView }));
          session = await (await onnxruntime).load(m.model, { ...m.options, executionThread: "main" });
        } else {
          handler ??= handlerOf(m.handler);
          session = await handler.backend.load(new Uint8Array(), m.options);
        }
        const id = nextSession++;
        sessions.set(id, session);
        const { signature, provider, fallbackReason, optionsNotApplied } = session;
        return { id: m.id, ok: true, session: id, signature, provider, fallbackReason, optionsNotApplied };
      }
      case "run": {
        if (m.config) handler?.host.useConfig(m.config);
        const session = sessions.get(m.session);
        if (!session) throw new RuntimeError("INTERNAL", `no session ${m.session} in this function process`);
        const outputs = await session.run(m.feeds, { outputs: m.outputs });
        return { id: m.id, ok: true, outputs: portableTensors(outputs), calls: takeCalls(), metrics: takeEvents() };
      }
      case "release": {
        const session = sessions.get(m.session);
        sessions.delete(m.session);
        await session?.release();
        return { id: m.id, ok: true };
      }
    }
  };

  channel.onMessage((message) => {
    const m = message as ProcessRequest;
    if (m.op === "answer") {
      const waiter = calling.get(m.call);
      calling.delete(m.call);
      if (m.error !== undefined) waiter?.reject(new RuntimeError(m.code ?? "INTERNAL", m.error, m.status === undefined ? undefined : { status: m.status }));
      else waiter?.resolve(m.outputs!);
      return;
    }
    void handle(m).then(reply, (error: unknown) => {
      const e = error as { message?: string; code?: RuntimeError["code"]; status?: number };
      reply({ id: m.id, ok: false, error: e.message ?? String(error), code: error instanceof RuntimeError ? error.code : (e.code ?? "INTERNAL"), status: e.status, calls: takeCalls(), metrics: takeEvents() });
    });
  });
}

/**
 * `ctx.metrics` in a function process: `local` (the same rules and errors as on the server, so a
 * bad declaration throws where the handler made it) with every declaration and update also told
 * to `record`, for the server to replay on the registry `/metrics` serves.
 */
function recordingMetrics(local: HandlerMetrics, record: (event: MetricEvent) => void): HandlerMetrics {
  const declared = new Set<string>();
  const wrap = <T extends object>(kind: "counter" | "gauge" | "histogram", spec: Parameters<HandlerMetrics["histogram"]>[0], metric: T, methods: readonly ("inc" | "dec" | "set" | "observe")[]): T => {
    if (!declared.has(spec.name)) {
      declared.add(spec.name);
      record({ declare: kind, spec: { name: spec.name, help: spec.help, labelNames: spec.labelNames && [...spec.labelNames], ...(spec.buckets && { buckets: [...spec.buckets] }) } });
    }
    const out: Record<string, (a?: MetricLabels | number, b?: number) => void> = {};
    for (const method of methods) {
      out[method] = (a, b) => {
        (metric as unknown as Record<string, (a?: MetricLabels | number, b?: number) => void>)[method]!(a, b);
        const labels = typeof a === "object" && a !== null ? { ...a } : undefined;
        record({ name: spec.name, method, labels, value: labels ? b : (a as number | undefined) });
      };
    }
    return out as T;
  };
  return {
    counter: (spec) => wrap("counter", spec, local.counter(spec), ["inc"]),
    gauge: (spec) => wrap("gauge", spec, local.gauge(spec), ["set", "inc", "dec"]),
    histogram: (spec) => wrap("histogram", spec, local.histogram(spec), ["observe"]),
  };
}

