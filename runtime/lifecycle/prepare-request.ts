import { elementCount, fillVariableDim, invalidArg } from "../core/mod.ts";
import type { InferOutput, InferRequest, Tensor } from "../core/mod.ts";
import type { FunctionConfig, TensorConfig } from "../config/function-config.ts";
import { classCount, classify, fromConfigType } from "../tensor/mod.ts";
import type { RequestHeader } from "../tensor/mod.ts";
import type { ScheduledRequest, ScheduledResult } from "../scheduler/mod.ts";

/**
 * Checks what a request declares (input names, datatypes, shapes, batch size, required inputs,
 * requested outputs) against a function's effective config, before any tensor data exists: the
 * call layer runs it on a request's header before decoding its data (`Deployment.checkRequest`),
 * and `prepareRequest` on the decoded request. Since a shape must match the dims and the batch
 * stay within `max_batch_size`, a model with fixed dims also caps the elements per request at
 * `max_batch_size` × product(dims). Every rejection names the input and the model, with Triton's
 * wording where clients know it. Returns the batch size.
 */
export function checkRequestHeader(header: RequestHeader, config: FunctionConfig): number {
  const model = config.name;
  const facts = factsOf(config);
  const batching = config.max_batch_size > 0;
  let batchSize: number | undefined;
  let seen = 0; // bit i: input i of the config was named (facts.inputs holds at most 31)
  const seenNames = config.input.length > 31 ? new Set<string>() : undefined;
  for (const input of header.inputs) {
    const known = facts.inputs.get(input.name);
    if (!known) throw invalidArg(`unexpected inference input '${input.name}' for model '${model}'`);
    if (seenNames) seenNames.add(input.name);
    else seen |= 1 << known.index;
    if (input.datatype !== known.datatype) {
      throw invalidArg(`inference input '${input.name}' data-type is '${input.datatype}', but model '${model}' expects '${known.datatype}'`);
    }
    if (!shapeMatches(input.shape, known.dims)) {
      throw invalidArg(`unexpected shape for input '${input.name}' for model '${model}'. Expected ${fmt(known.dims)}, got ${fmt(input.shape)}`);
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
  if ((seen & facts.requiredMask) !== facts.requiredMask || seenNames) {
    const named = (i: number, name: string) => (seenNames ? seenNames.has(name) : (seen & (1 << i)) !== 0);
    const missing = config.input.filter((spec, i) => !spec.optional && !named(i, spec.name)).map((i) => i.name);
    if (missing.length > 0) {
      throw invalidArg(
        `expected ${config.input.filter((i) => !i.optional).length} inputs but got ${header.inputs.length} inputs for model '${model}': missing required input(s) ${missing.map((m) => `'${m}'`).join(", ")}`,
      );
    }
  }
  if (header.outputs) {
    for (const out of header.outputs) {
      const spec = facts.outputs.get(out.name);
      if (!spec) throw invalidArg(`unexpected inference output '${out.name}' for model '${model}'`);
      if (out.parameters) classCount(out.parameters, out.name, fromConfigType(spec.data_type));
    }
  }
  whole(header.parameters.priority, "priority");
  whole(header.parameters.timeout, "timeout");
  return batchSize ?? 1;
}

/** What the checks need of a config, worked out once per config (it never changes once complete). */
interface ConfigFacts {
  /** Inputs by name: position, datatype, and full dims (with the batch dimension as -1 when batching). */
  inputs: Map<string, { index: number; datatype: string; dims: readonly number[]; spec: TensorConfig }>;
  /** Bit i set when input i is required (configs of at most 31 inputs; else 0 and a Set is used). */
  requiredMask: number;
  outputs: Map<string, TensorConfig>;
  /**
   * Every input's shape beyond the batch is fixed (the checks hold requests to it): all requests
   * with the same inputs batch together, so the shape key is the input names alone.
   */
  fixedShapes: boolean;
  /** The shape key of a request naming every input in config order (the common case), when `fixedShapes`. */
  allInputsKey: string;
}

const configFacts = new WeakMap<FunctionConfig, ConfigFacts>();

function factsOf(config: FunctionConfig): ConfigFacts {
  let facts = configFacts.get(config);
  if (facts) return facts;
  const batching = config.max_batch_size > 0;
  const inputs: ConfigFacts["inputs"] = new Map();
  let requiredMask = 0;
  config.input.forEach((spec, index) => {
    inputs.set(spec.name, { index, datatype: fromConfigType(spec.data_type), dims: batching ? [-1, ...spec.dims] : spec.dims, spec });
    if (!spec.optional && config.input.length <= 31) requiredMask |= 1 << index;
  });
  const fixedShapes = config.input.every((spec) => spec.dims.every((d) => d >= 0));
  facts = {
    inputs,
    requiredMask,
    outputs: new Map(config.output.map((o) => [o.name, o])),
    fixedShapes,
    allInputsKey: config.input.map((i) => i.name).sort().join(";"),
  };
  configFacts.set(config, facts);
  return facts;
}

/**
 * Checks a decoded request against a function's effective config (`checkRequestHeader`, then the
 * backend's per-tensor check) and shapes its inputs for the model (batch dimension, `reshape`).
 */
export function prepareRequest(request: InferRequest, config: FunctionConfig, checkInput?: (name: string, tensor: Tensor) => void): ScheduledRequest {
  const batching = config.max_batch_size > 0;
  // A call checked the header before decoding the data; checked again here, on the tensors this
  // deployment runs (a lease may have moved the request to a successor of another config), at a
  // fraction of a microsecond.
  const batchSize = checkRequestHeader({ inputs: request.inputs.map((i) => ({ name: i.name, datatype: i.tensor.datatype, shape: i.tensor.shape })), outputs: request.outputs, parameters: request.parameters }, config);
  const facts = factsOf(config);
  const feeds: Record<string, Tensor> = {};
  for (const input of request.inputs) {
    checkInput?.(input.name, input.tensor);
    feeds[input.name] = reshapeFeed(input.tensor, facts.inputs.get(input.name)!.spec, batching);
  }
  const scheduled: ScheduledRequest = {
    feeds,
    batchSize,
    shapeKey: shapeKey(request, facts, batching),
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

/**
 * Picks the outputs to return (requested ones in request order, else all declared) in API shape.
 * A requested output with `parameters.classification: N` (checked with the request) comes as its
 * top N classes, labelled from its `label_filename` (Triton's classification extension, here below
 * the protocols, so each one's call gets it without a step of its own).
 */
export function collectOutputs(request: InferRequest, result: ScheduledResult, config: FunctionConfig, labels?: ReadonlyMap<string, readonly string[]>): InferOutput[] {
  const batching = config.max_batch_size > 0;
  const { outputs: specs } = factsOf(config);
  const collected: InferOutput[] = [];
  const collect = (name: string, classes?: unknown) => {
    const tensor = result[name];
    // An ensemble whose step conditions skipped the producer answers without that output (an early
    // exit); an output declared optional (a generator's prompt logprobs) comes only in some answers.
    if (!tensor && (config.ensemble_scheduling || config.output.find((o) => o.name === name)?.optional)) return;
    if (!tensor) throw new Error(`model '${config.name}' produced no output '${name}'`);
    if (typeof classes === "number" && classes > 0) return void collected.push({ name, tensor: classify(tensor, classes, { batched: batching, labels: labels?.get(name), name }) });
    const spec = specs.get(name)!;
    if (!spec.reshape) return void collected.push({ name, tensor });
    const rows = batching ? [tensor.shape[0]!] : [];
    collected.push({ name, tensor: { ...tensor, shape: [...rows, ...fillVariableDim(spec.dims, elementCount(tensor.shape) / elementCount(rows))] } });
  };
  if (request.outputs) for (const o of request.outputs) collect(o.name, o.parameters?.classification);
  else for (const o of config.output) collect(o.name);
  return collected;
}

/**
 * What requests must share to run in one batch: each input's name and shape beyond the batch
 * dimension. Where every such shape is fixed by the config, the names say it all.
 */
function shapeKey(request: InferRequest, facts: ConfigFacts, batching: boolean): string {
  const { inputs } = request;
  if (facts.fixedShapes) {
    if (inputs.length === facts.inputs.size && inputs.every((input, i) => facts.inputs.get(input.name)!.index === i)) return facts.allInputsKey;
    return inputs.map((i) => i.name).sort().join(";");
  }
  const parts: string[] = [];
  for (const { name, tensor } of inputs) parts.push(`${name}:${tensor.shape.slice(batching ? 1 : 0).join("x")}`);
  return parts.sort().join(";");
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
  return { ...tensor, shape: [...rows, ...fillVariableDim(spec.reshape.shape, perRow)] };
}

function shapeMatches(actual: readonly number[], expected: readonly number[]): boolean {
  return actual.length === expected.length && expected.every((d, i) => d === -1 || d === actual[i]);
}

function fmt(shape: readonly number[]): string {
  return `[${shape.join(",")}]`;
}
