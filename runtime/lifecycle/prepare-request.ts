import { elementCount, invalidArg } from "../core/mod.ts";
import type { InferOutput, InferRequest, Tensor } from "../core/mod.ts";
import type { FunctionConfig, TensorConfig } from "../config/function-config.ts";
import { fromConfigType } from "../tensor/mod.ts";
import type { RequestHeader } from "../tensor/mod.ts";
import type { ScheduledRequest, ScheduledResult } from "../scheduler/mod.ts";

/**
 * Checks what a request declares (input names, datatypes, shapes, batch size, required inputs,
 * requested outputs) against a function's effective config, before any tensor data exists: the
 * HTTP layer passes it to the decoder, and `prepareRequest` runs it on decoded requests. Since a
 * shape must match the dims and the batch stay within `max_batch_size`, a model with fixed dims
 * also caps the elements per request at `max_batch_size` × product(dims). Every rejection names
 * the input and the model, with Triton's wording where clients know it. Returns the batch size.
 */
export function checkRequestHeader(header: RequestHeader, config: FunctionConfig): number {
  const model = config.name;
  const batching = config.max_batch_size > 0;
  const declared = new Map(config.input.map((i) => [i.name, i]));
  let batchSize: number | undefined;
  const seen = new Set<string>();
  for (const input of header.inputs) {
    const spec = declared.get(input.name);
    if (!spec) throw invalidArg(`unexpected inference input '${input.name}' for model '${model}'`);
    seen.add(input.name);
    const expectedType = fromConfigType(spec.data_type);
    if (input.datatype !== expectedType) {
      throw invalidArg(`inference input '${input.name}' data-type is '${input.datatype}', but model '${model}' expects '${expectedType}'`);
    }
    const full = batching ? [-1, ...spec.dims] : spec.dims;
    if (!shapeMatches(input.shape, full)) {
      throw invalidArg(`unexpected shape for input '${input.name}' for model '${model}'. Expected ${fmt(full)}, got ${fmt(input.shape)}`);
    }
    if (batching) {
      const rows = input.shape[0]!;
      if (rows < 1 || rows > config.max_batch_size) {
        throw invalidArg(`inference request batch-size must be <= ${config.max_batch_size} for '${model}' (input '${input.name}' has batch ${rows})`);
      }
      if (batchSize !== undefined && rows !== batchSize) {
        throw invalidArg(`input '${input.name}' has batch size ${rows} but other inputs of this request have ${batchSize}`);
      }
      batchSize = rows;
    }
  }
  const missing = config.input.filter((i) => !i.optional && !seen.has(i.name)).map((i) => i.name);
  if (missing.length > 0) {
    throw invalidArg(
      `expected ${config.input.filter((i) => !i.optional).length} inputs but got ${header.inputs.length} inputs for model '${model}': missing required input(s) ${missing.map((m) => `'${m}'`).join(", ")}`,
    );
  }
  const outputNames = new Set(config.output.map((o) => o.name));
  for (const out of header.outputs ?? []) {
    if (!outputNames.has(out.name)) throw invalidArg(`unexpected inference output '${out.name}' for model '${model}'`);
  }
  whole(header.parameters.priority, "priority");
  whole(header.parameters.timeout, "timeout");
  return batchSize ?? 1;
}

/**
 * Checks a decoded request against a function's effective config (`checkRequestHeader`, then the
 * backend's per-tensor check) and shapes its inputs for the model (batch dimension, `reshape`).
 */
export function prepareRequest(
  request: InferRequest,
  config: FunctionConfig,
  options: { checkInput?: (name: string, tensor: Tensor) => void; headerChecked?: boolean } = {},
): ScheduledRequest {
  const batching = config.max_batch_size > 0;
  // `headerChecked`: checkRequestHeader already passed on this request's header against this config
  // (the HTTP layer checks it before decoding any data); its batch size is then the first input's rows.
  const batchSize = options.headerChecked
    ? batching
      ? request.inputs[0]!.tensor.shape[0]!
      : 1
    : checkRequestHeader({ inputs: request.inputs.map((i) => ({ name: i.name, datatype: i.tensor.datatype, shape: i.tensor.shape })), outputs: request.outputs, parameters: request.parameters }, config);
  const specs = new Map(config.input.map((i) => [i.name, i]));
  const feeds: Record<string, Tensor> = {};
  const keyParts: string[] = [];
  for (const input of request.inputs) {
    const { tensor } = input;
    options.checkInput?.(input.name, tensor);
    feeds[input.name] = reshapeFeed(tensor, specs.get(input.name)!, batching);
    keyParts.push(`${input.name}:${tensor.shape.slice(batching ? 1 : 0).join("x")}`);
  }
  const scheduled: ScheduledRequest = {
    feeds,
    batchSize,
    shapeKey: keyParts.sort().join(";"),
    priority: whole(request.parameters.priority, "priority"),
    timeoutMs: (whole(request.parameters.timeout, "timeout") ?? 0) / 1000 || undefined,
    parameters: request.parameters,
  };
  const outputs = neededOutputs(request, config);
  if (outputs) scheduled.outputs = outputs;
  return scheduled;
}

/**
 * The outputs a request asks for, when they are fewer than the function declares (names checked
 * already); undefined when it asks for all, or names none (all, as KServe says).
 */
function neededOutputs(request: InferRequest, config: FunctionConfig): string[] | undefined {
  const requested = request.outputs;
  if (!requested || requested.length === 0) return undefined;
  const names = [...new Set(requested.map((o) => o.name))];
  return names.length < config.output.length ? names : undefined;
}

/** Picks the outputs to return (requested ones in request order, else all declared) in API shape. */
export function collectOutputs(request: InferRequest, result: ScheduledResult, config: FunctionConfig): InferOutput[] {
  const batching = config.max_batch_size > 0;
  const names = request.outputs?.map((o) => o.name) ?? config.output.map((o) => o.name);
  const specs = new Map(config.output.map((o) => [o.name, o]));
  return names.flatMap((name): InferOutput[] => {
    const tensor = result[name];
    // An ensemble whose step conditions skipped the producer answers without that output (an early exit).
    if (!tensor && config.ensemble_scheduling) return [];
    if (!tensor) throw new Error(`model '${config.name}' produced no output '${name}'`);
    const spec = specs.get(name)!;
    if (!spec.reshape) return [{ name, tensor }];
    const rows = batching ? [tensor.shape[0]!] : [];
    return [{ name, tensor: { ...tensor, shape: [...rows, ...resolveDims(spec.dims, elementCount(tensor.shape) / elementCount(rows))] } }];
  });
}

/** A reserved request parameter that must be a non-negative integer (Triton's uint64). */
function whole(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw invalidArg(`request parameter '${name}' must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

function reshapeFeed(tensor: Tensor, spec: TensorConfig, batching: boolean): Tensor {
  if (!spec.reshape) return tensor;
  const rows = batching ? [tensor.shape[0]!] : [];
  const perRow = elementCount(tensor.shape) / elementCount(rows);
  return { ...tensor, shape: [...rows, ...resolveDims(spec.reshape.shape, perRow)] };
}

/** Fills at most one -1 so the dims hold `count` elements. */
function resolveDims(dims: readonly number[], count: number): number[] {
  const known = dims.reduce((n, d) => (d === -1 ? n : n * d), 1);
  return dims.map((d) => (d === -1 ? count / known : d));
}

function shapeMatches(actual: readonly number[], expected: readonly number[]): boolean {
  return actual.length === expected.length && expected.every((d, i) => d === -1 || d === actual[i]);
}

function fmt(shape: readonly number[]): string {
  return `[${shape.join(",")}]`;
}
