import { elementCount, invalidArg } from "../core/mod.ts";
import type { InferResponse } from "../core/mod.ts";
import type { FunctionConfig } from "../config/mod.ts";
import type { Deployment } from "../lifecycle/mod.ts";
import { checkElementBudget, encodeJsonData, fromConfigType, readInferRequest } from "../tensor/mod.ts";
import { admit } from "./admission.ts";
import type { Call, CallContext } from "./admission.ts";
import { decodeFor, elementLimit } from "./infer-call.ts";
import { generateOnGenerator } from "./openai-call.ts";

const utf8 = new TextEncoder();
const text = new TextDecoder();

/**
 * Triton's generate extension (`POST …/generate` and `…/generate_stream`): a flat JSON object
 * whose fields name the model's inputs (`"text_input": "…"`, `"max_tokens": 16`, or any input with
 * an array), plus optional `id` and `parameters`; other fields become request parameters, as
 * Triton passes them "as parameters or tensors based on model specification". Admission as for
 * inference; the request then goes through the same checks as a KServe request. Resolves once the
 * call is admitted and decoded, with its responses as JSON texts (`{"model_name", "model_version",
 * <output>: value…}`, an output of one element as a scalar) — one from a one-shot function, several
 * from a streaming one. Errors before the first response reject the first `next()`.
 */
export async function generateCall(ctx: CallContext, call: Call, stream = true): Promise<AsyncGenerator<string, void, undefined>> {
  const { lease, deployment: d, bytes, options } = await admit(ctx, call);
  // A generator takes text and sampling parameters, as Triton's vLLM backend does.
  if (d.codec) return await generateOnGenerator(lease, parseBody(bytes), call.body, stream);
  const limit = elementLimit(ctx, d);
  const request = decodeFor(ctx, d, readInferRequest(utf8.encode(JSON.stringify(kserveForm(parseBody(bytes), d.config, limit)))));
  const responses = lease.stream(request, options);
  return (async function* () {
    for await (const response of responses) yield encodeEvent(response, d);
  })();
}

function parseBody(bytes: Uint8Array): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text.decode(bytes));
  } catch (error) {
    throw invalidArg(`malformed JSON in generate request: ${(error as Error).message}`);
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw invalidArg("a generate request must be a JSON object");
  return body as Record<string, unknown>;
}

/**
 * The KServe v2 request a generate body stands for. A field's shape is its nesting (a scalar is
 * [1], or [] for an input declared with no dims), with the batch dimension of 1 added when the
 * function batches and the value does not carry it.
 */
function kserveForm(body: Record<string, unknown>, config: FunctionConfig, limit: { maxElements: number; limitName: string }) {
  const { id, parameters, ...fields } = body;
  if (id !== undefined && typeof id !== "string") throw invalidArg(`generate request: 'id' must be a string, not ${JSON.stringify(id)}`);
  if (parameters !== undefined && (typeof parameters !== "object" || parameters === null || Array.isArray(parameters))) {
    throw invalidArg("generate request: 'parameters' must be a JSON object");
  }
  const extra: Record<string, unknown> = { ...(parameters as Record<string, unknown> | undefined) };
  const inputs = [];
  for (const [name, value] of Object.entries(fields)) {
    const input = config.input.find((i) => i.name === name);
    if (!input) {
      if (value === null || typeof value === "object") throw invalidArg(`generate request: '${name}' is not an input of '${config.name}' (inputs: ${config.input.map((i) => i.name).join(", ")}), and a parameter must be a string, number or boolean`);
      extra[name] = value;
      continue;
    }
    let shape = nesting(value, name);
    // Refused by its count before it is flattened and re-encoded (each a copy of its size).
    checkElementBudget([{ name, datatype: fromConfigType(input.data_type), elements: elementCount(shape) }], limit.maxElements, limit.limitName);
    if (shape.length === 0 && input.dims.length > 0) shape = [1];
    if (config.max_batch_size > 0 && shape.length === input.dims.length) shape = [1, ...shape];
    inputs.push({ name, datatype: fromConfigType(input.data_type), shape, data: Array.isArray(value) ? value.flat(Infinity) : [value] });
  }
  return { ...(id !== undefined && { id }), parameters: extra, inputs };
}

/** The shape of a nested JSON array (a scalar's is []); ragged arrays are refused. */
function nesting(value: unknown, name: string): number[] {
  const shape: number[] = [];
  let level: unknown = value;
  while (Array.isArray(level)) {
    shape.push(level.length);
    const first: unknown = level[0];
    if (level.some((e) => Array.isArray(e) !== Array.isArray(first) || (Array.isArray(e) && e.length !== (first as unknown[]).length))) {
      throw invalidArg(`generate request: '${name}' is a ragged array; every row must have the same length`);
    }
    level = first;
  }
  return shape;
}

/** One response as the generate extension's JSON object. */
function encodeEvent(response: InferResponse, d: Deployment): string {
  let json = `{${response.id !== undefined ? `"id":${JSON.stringify(response.id)},` : ""}"model_name":${JSON.stringify(d.name)},"model_version":${JSON.stringify(response.modelVersion)}`;
  for (const { name, tensor } of response.outputs) {
    const data = encodeJsonData(tensor, { name });
    json += `,${JSON.stringify(name)}:${elementCount(tensor.shape) === 1 ? data.slice(1, -1) : data}`;
  }
  return `${json}}`;
}
