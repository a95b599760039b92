import { RuntimeError } from "../core/mod.ts";
import type { Tensor, TensorSignature } from "../core/mod.ts";
import { encodeJsonData, isDataType, storageFor } from "../tensor/mod.ts";
import { HandlerError, isReply } from "./handler-api.ts";
import type { FunctionAnswer, FunctionRequest } from "./handler-api.ts";

const utf8 = new TextEncoder();
const text = new TextDecoder();
/** The signal of a request without a client that could go away (no connection, no calling function). */
const NEVER = new AbortController().signal;

/** A function-style request as a handler sees it. */
export function functionRequest(body: Uint8Array, contentType: string, signal?: AbortSignal): FunctionRequest {
  return {
    body,
    contentType,
    signal: signal ?? NEVER,
    text: () => text.decode(body),
    json: <T,>() => {
      try {
        return JSON.parse(text.decode(body)) as T;
      } catch (error) {
        // The client's mistake: a 400 naming the function and the step, as any HandlerError.
        throw new HandlerError(`the request body is not JSON (${(error as Error).message})`, 400);
      }
    },
  };
}

/** An answer as bytes and a media type: a reply as given, bytes as octets, anything else as JSON. */
export function encodeAnswer(answer: FunctionAnswer): { body: Uint8Array; contentType: string } {
  if (isReply(answer)) return { body: answer.body, contentType: answer.contentType };
  if (answer instanceof Uint8Array) return { body: answer, contentType: "application/octet-stream" };
  let json: string | undefined;
  try {
    json = JSON.stringify(answer ?? null);
  } catch (error) {
    throw new RuntimeError("INTERNAL", `the handler's answer cannot be sent as JSON: ${(error as Error).message}`);
  }
  return { body: utf8.encode(json ?? "null"), contentType: "application/json" };
}

/** A model's outputs as JSON (`{"outputs": {name: {datatype, shape, data}}}`), for a handler without postprocess. */
export function outputsAnswer(outputs: Record<string, Tensor>): { body: Uint8Array; contentType: string } {
  const parts = Object.entries(outputs).map(
    ([name, t]) => `${JSON.stringify(name)}:{"datatype":${JSON.stringify(t.datatype)},"shape":${JSON.stringify(t.shape)},"data":${encodeJsonData(t, { name })}}`,
  );
  return { body: utf8.encode(`{"outputs":{${parts.join(",")}}}`), contentType: "application/json" };
}

/**
 * Checks what `preprocess` returned before it meets the model: each input a tensor with a known
 * datatype, a shape of whole non-negative dimensions, and data of that datatype's storage and
 * that shape's size. The model's own checks (names, dims, batch) follow as for any request.
 */
export function checkHandlerInputs(fn: string, inputs: Record<string, unknown>): Record<string, Tensor> {
  for (const [name, value] of Object.entries(inputs)) {
    const problem = tensorProblem(value);
    if (problem) throw new RuntimeError("INTERNAL", `function '${fn}' preprocess: input '${name}' ${problem}`);
  }
  return inputs as Record<string, Tensor>;
}

/**
 * Checks what `compute` returned against the function's signature, as a model's outputs would be
 * trusted: every declared output present (extras are dropped), of its datatype, a well-formed
 * tensor whose shape fits the declared one (-1: any), with `rows` rows when the function batches.
 */
export function checkComputedOutputs(fn: string, outputs: Record<string, unknown>, declared: readonly TensorSignature[], rows: number | undefined): Record<string, Tensor> {
  const fail = (name: string, problem: string) => new RuntimeError("INTERNAL", `function '${fn}' compute: output '${name}' ${problem}`);
  const checked: Record<string, Tensor> = {};
  for (const want of declared) {
    const value = Object.hasOwn(outputs, want.name) ? outputs[want.name] : undefined;
    if (value === undefined) throw fail(want.name, `is missing (compute returned: ${Object.keys(outputs).join(", ") || "nothing"})`);
    const problem = tensorProblem(value);
    if (problem) throw fail(want.name, problem);
    const t = value as Tensor;
    if (t.datatype !== want.datatype) throw fail(want.name, `is ${t.datatype}; the config declares ${want.datatype}`);
    const fits = t.shape.length === want.shape.length && want.shape.every((d, i) => d === -1 || d === t.shape[i]);
    if (!fits) throw fail(want.name, `has shape [${t.shape.join(", ")}]; the config declares [${want.shape.join(", ")}]`);
    if (rows !== undefined && t.shape[0] !== rows) throw fail(want.name, `has ${t.shape[0]} rows for a batch of ${rows}`);
    checked[want.name] = t;
  }
  return checked;
}

/** What is wrong with a value meant as a tensor, or undefined when it is one. */
export function tensorProblem(value: unknown): string | undefined {
  const t = value as Partial<Tensor> | null;
  if (!t || typeof t !== "object") return "is not a tensor { datatype, shape, data }";
  if (!isDataType(t.datatype)) return `has datatype ${JSON.stringify(t.datatype)}, not one of KServe's (FP32, INT64, BYTES…)`;
  if (!Array.isArray(t.shape) || !t.shape.every((d) => Number.isInteger(d) && d >= 0)) return "needs a shape of whole non-negative dimensions";
  const count = t.shape.reduce((n: number, d: number) => n * d, 1);
  const Storage = storageFor(t.datatype);
  const data = t.data as unknown;
  const ok = Storage ? data instanceof Storage : Array.isArray(data) && data.every((e) => e instanceof Uint8Array);
  if (!ok) return `needs its data as ${Storage ? Storage.name : "an array of Uint8Array"} for ${t.datatype}`;
  if ((data as ArrayLike<unknown>).length !== count) return `has ${(data as ArrayLike<unknown>).length} elements for shape [${t.shape.join(", ")}] (${count})`;
  return undefined;
}
