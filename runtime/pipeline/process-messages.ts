import { isErrorCode } from "../core/mod.ts";
import { isDataType } from "../tensor/mod.ts";
import { tensorProblem } from "./function-io.ts";
import type { ProcessRequest } from "./process-protocol.ts";
import type { HandlerOutcome, HandlerStep } from "./handler-host.ts";

// What a function process sends is believed only once it has the protocol's shape: the process runs
// the function's own code, which can write to the channel (process.send) as well as the runtime can.

/** The request a reply answers, by what it asked for. */
export type PendingOp = ProcessRequest["op"];

const METHODS = new Set(["inc", "dec", "set", "observe"]);
// The steps and outcomes a handler call is counted under: labels of tensorfn_handler_calls_total.
const STEPS: Record<HandlerStep, true> = { import: true, initialize: true, execute: true, compute: true, preprocess: true, postprocess: true, finalize: true, sequence: true, escape: true };
const OUTCOMES: Record<HandlerOutcome, true> = { ok: true, error: true, timeout: true };
const KINDS = new Set(["counter", "gauge", "histogram"]);

/**
 * What is wrong with a message from a function process, or undefined when it may be believed.
 * `pending` gives the op of the request in flight with that id (undefined: none is): a reply must
 * answer one, with what that op returns; a notice (id 0) carries metric updates or a `ctx.infer` call.
 */
export function processMessageProblem(message: unknown, pending: (id: number) => PendingOp | undefined): string | undefined {
  if (!isRecord(message)) return "a message that is not an object";
  if (message.metrics !== undefined) {
    const problem = metricsProblem(message.metrics);
    if (problem) return problem;
  }
  if (!("ok" in message)) {
    if (message.id !== 0) return `a notice with id ${short(message.id)} (notices carry 0)`;
    if (message.infer === undefined) return message.metrics === undefined ? "a notice with nothing in it" : undefined;
    return inferProblem(message.infer);
  }
  const id = message.id;
  const op = typeof id === "number" && Number.isSafeInteger(id) ? pending(id) : undefined;
  if (op === undefined) return `a reply to no request in flight (id ${short(id)})`;
  if (message.calls !== undefined && !(Array.isArray(message.calls) && message.calls.every(isCall))) return "a reply whose handler calls are not [step, ms, outcome]";
  if (message.ok === false) {
    if (typeof message.error !== "string") return "an error reply without its message";
    if (!isErrorCode(message.code)) return `an error reply with code ${short(message.code)}, not one of the server's`;
    if (message.status !== undefined && !(Number.isInteger(message.status) && (message.status as number) >= 400 && (message.status as number) <= 599)) {
      return `an error reply with status ${short(message.status)}, not an HTTP error status`;
    }
    return undefined;
  }
  if (message.ok !== true) return `a reply whose ok is ${short(message.ok)}`;
  if (op === "load") {
    if (!(typeof message.session === "number" && Number.isSafeInteger(message.session))) return "a load reply without its session";
    if (!signatureOk(message.signature)) return "a load reply without a signature of tensors";
    if (message.provider !== undefined && typeof message.provider !== "string") return "a load reply whose provider is not a name";
    return undefined;
  }
  if (op === "run") {
    if (!isRecord(message.outputs)) return "a run reply without its outputs";
    for (const [name, tensor] of Object.entries(message.outputs)) {
      const problem = tensorProblem(tensor);
      if (problem) return `a run reply whose output ${short(name)} ${problem}`;
    }
  }
  return undefined;
}

function inferProblem(infer: unknown): string | undefined {
  if (!isRecord(infer)) return "a ctx.infer call that is not an object";
  if (!(typeof infer.call === "number" && Number.isSafeInteger(infer.call))) return "a ctx.infer call without its number";
  if (typeof infer.target !== "string") return "a ctx.infer call without the function it calls";
  if (!isRecord(infer.inputs)) return "a ctx.infer call without its inputs";
  for (const [name, tensor] of Object.entries(infer.inputs)) {
    const problem = tensorProblem(tensor);
    if (problem) return `a ctx.infer call whose input ${short(name)} ${problem}`;
  }
  if (infer.outputs !== undefined && !(Array.isArray(infer.outputs) && infer.outputs.every((o) => typeof o === "string"))) return "a ctx.infer call whose outputs are not names";
  return undefined;
}

function metricsProblem(metrics: unknown): string | undefined {
  if (!Array.isArray(metrics)) return "metric events that are not a list";
  for (const event of metrics) {
    if (!isRecord(event)) return "a metric event that is not an object";
    if ("declare" in event) {
      if (!KINDS.has(event.declare as string) || !isRecord(event.spec) || typeof event.spec.name !== "string") return "a metric declaration without its kind and name";
      continue;
    }
    if (typeof event.name !== "string" || !METHODS.has(event.method as string)) return `a metric update ${short(event.method)} that is not inc, dec, set or observe`;
    if (event.value !== undefined && typeof event.value !== "number") return "a metric update whose value is not a number";
    if (event.labels !== undefined && !(isRecord(event.labels) && Object.values(event.labels).every((v) => typeof v === "string"))) return "a metric update whose labels are not names";
  }
  return undefined;
}

function signatureOk(signature: unknown): boolean {
  const tensors = (list: unknown) =>
    Array.isArray(list) && list.every((t) => isRecord(t) && typeof t.name === "string" && isDataType(t.datatype) && Array.isArray(t.shape) && t.shape.every((d) => Number.isInteger(d) && d >= -1));
  return isRecord(signature) && tensors(signature.inputs) && tensors(signature.outputs);
}

function isCall(call: unknown): boolean {
  return Array.isArray(call) && call.length === 3 && Object.hasOwn(STEPS, call[0]) && typeof call[1] === "number" && Number.isFinite(call[1]) && Object.hasOwn(OUTCOMES, call[2]);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value from the process as a message quotes it: short, and never a whole payload. */
function short(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
