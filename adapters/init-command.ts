// `tensorfn init <dir>`: a new function folder that loads as it is. From a model (`--model`):
// the model copied into 1/, a function.yaml that writes out what tensorfn would complete from the
// model (the same completion a load runs, so it cannot disagree), and with `--handler` a typed
// handler around it. Without a model: a TypeScript function and its version folder (a .keep in it, for git).
import { copyFile, mkdir, readdir, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { completeConfig, functionNameProblem, parseFunctionConfig } from "../runtime/config/mod.ts";
import type { FunctionConfig, TensorConfig } from "../runtime/config/mod.ts";
import { fromConfigType, storageFor } from "../runtime/tensor/mod.ts";
import type { ModelSignature } from "../runtime/core/mod.ts";

export interface InitOptions {
  dir: string;
  /** An ONNX model to copy in as version 1. */
  model?: string;
  /** With a model: write a handler around it (preprocess, postprocess). */
  handler: boolean;
  /** Reads a model's inputs and outputs (the CLI's modelSignatureReader). */
  signatureOf(path: string): Promise<ModelSignature>;
}

/** Writes the folder; returns the files written, relative to it. Throws with a message for the user. */
export async function initFunction(options: InitOptions): Promise<string[]> {
  const dir = resolve(options.dir);
  const name = basename(dir);
  const problem = functionNameProblem(name);
  if (problem) throw new Error(`the folder's name is the function's name: ${problem}`);
  const existing = await readdir(dir).catch(() => []);
  if (existing.length > 0) throw new Error(`${options.dir} is not empty: init writes a new function folder`);
  if (options.handler && !options.model) throw new Error("--handler writes a handler around a model: name it with --model (without --model, init writes a handler function)");

  const files: Record<string, string> = {};
  let config: FunctionConfig | undefined;
  if (options.model) {
    // Read before anything is written: a file that is not a model leaves no half-made folder.
    const signature = await options.signatureOf(resolve(options.model));
    const { config: declared } = parseFunctionConfig("", { file: "function.yaml", name });
    if (!declared) throw new Error("internal: an empty function.yaml did not parse");
    config = completeConfig(declared, signature);
    files["function.yaml"] = modelYaml(name, config, options.handler);
    if (options.handler) files["handler.ts"] = modelHandler(name, config);
  } else {
    files["function.yaml"] = `# ${name}: a function written in TypeScript (docs/guides/handlers.md).\nbackend: handler\nhandler: handler.ts\n`;
    files["handler.ts"] = HANDLER_FUNCTION.replaceAll("NAME", name);
  }
  await mkdir(join(dir, "1"), { recursive: true });
  // Git keeps no empty folder: without a file in it, a clone of the user's repository has no version 1.
  if (options.model) await copyFile(resolve(options.model), join(dir, "1", "model.onnx"));
  else files["1/.keep"] = "";
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text, { flag: "wx" });
  return [...(options.model ? ["1/model.onnx"] : []), ...Object.keys(files)];
}

function modelYaml(name: string, config: FunctionConfig, handler: boolean): string {
  const tensors = (list: TensorConfig[]) =>
    list.map((t) => `  - { name: ${JSON.stringify(t.name)}, data_type: ${t.data_type}, dims: [${t.dims.join(", ")}]${t.reshape ? `, reshape: { shape: [${t.reshape.shape.join(", ")}] }` : ""} }`).join("\n");
  return [
    `# ${name}: 1/model.onnx, served as POST /v2/models/${name}/infer${handler ? ` and POST /v1/functions/${name}` : ""}.`,
    "# What follows is what tensorfn reads from the model when function.yaml leaves it out: keep it",
    "# to pin it down, or change it (docs/reference/function-yaml.md).",
    `max_batch_size: ${config.max_batch_size}${config.max_batch_size > 0 ? "   # the first dimension is the batch: requests are batched together" : "   # the model has no variable first dimension: no batching"}`,
    ...(config.dynamic_batching ? ["dynamic_batching: {}"] : []),
    "input:",
    tensors(config.input),
    "output:",
    tensors(config.output),
    ...(handler ? ["handler: handler.ts   # preprocess → the model → postprocess, for POST /v1/functions"] : []),
    "",
  ].join("\n");
}

function modelHandler(name: string, config: FunctionConfig): string {
  const batched = config.max_batch_size > 0;
  const inputs = config.input.map((t) => {
    const datatype = fromConfigType(t.data_type) ?? "FP32";
    const shape = [...(batched ? [1] : []), ...t.dims]; // as declared: the server applies a reshape
    const data = datatype === "BYTES" ? `values.map((v) => new TextEncoder().encode(String(v)))` : `${storageFor(datatype)?.name ?? "Float32Array"}.from(values${/INT64/.test(datatype) ? ".map((v) => BigInt(v as number))" : ""} as never)`;
    const kind = datatype === "BYTES" ? "any" : datatype === "BOOL" ? "boolean" : /INT/.test(datatype) ? "integer" : "number";
    return `    ${literal(t.name)}: tensor(ctx, body, ${literal(t.name)}, "${datatype}", [${shape.join(", ")}], "${kind}", (values) => ${data}),`;
  });
  const bodyShape = `{${config.input.map((t) => `${literal(t.name)}: [...]`).join(", ")}}`;
  return `// ${name}: POST /v1/functions/${name} with ${bodyShape} (flat arrays of
// values) → preprocess → the model (batched with other calls) → postprocess → JSON.
// docs/guides/handlers.md, "Around a model".
import type { FunctionRequest, HandlerContext, Tensor } from "tensorfn";

type Body = Record<string, unknown[]>;

/** The request's body → the model's inputs, one request's worth${batched ? " (a batch of 1)" : ""}. */
export function preprocess(request: FunctionRequest, ctx: HandlerContext): Record<string, Tensor> {
  const body = request.json<Body | null>();
  if (body === null || typeof body !== "object") throw ctx.error(${literal(`send ${bodyShape}`)});
  return {
${inputs.join("\n")}
  };
}

/** The model's outputs → the answer: each output's values as a JSON array. */
export function postprocess(outputs: Record<string, Tensor>): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(outputs).map(([name, t]) => [name, Array.from(t.data as ArrayLike<unknown>, (v) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : typeof v === "bigint" ? Number(v) : v))]),
  );
}

/**
 * One input from the body: its values, and the shape with its variable (-1) dimension sized to them.
 * What a client got wrong is a ctx.error (→ 400, naming the input), never a model's error (→ 500).
 */
function tensor(ctx: HandlerContext, body: Body, name: string, datatype: Tensor["datatype"], shape: number[], kind: "number" | "integer" | "boolean" | "any", data: (values: unknown[]) => Tensor["data"]): Tensor {
  const values = body[name];
  if (!Array.isArray(values)) throw ctx.error(\`\${name}: send an array of values\`);
  const fits = { number: (v: unknown) => typeof v === "number", integer: Number.isSafeInteger, boolean: (v: unknown) => typeof v === "boolean", any: () => true }[kind];
  const bad = values.findIndex((v) => !fits(v));
  if (bad >= 0) throw ctx.error(\`\${name}[\${bad}]: \${JSON.stringify(values[bad])} is not a\${kind === "integer" ? "n integer" : \` \${kind}\`}\`);
  const fixed = shape.reduce((n, d) => (d > 0 ? n * d : n), 1);
  const variable = shape.includes(-1);
  if (variable ? values.length === 0 || values.length % fixed !== 0 : values.length !== fixed) {
    throw ctx.error(\`\${name}: \${values.length} values for shape [\${shape.join(", ")}]: send \${variable ? \`a multiple of \${fixed}\` : fixed}\`);
  }
  // With several variable dimensions, the last takes the values and the others are 1: change it where the model wants otherwise.
  const last = shape.lastIndexOf(-1);
  return { datatype, shape: shape.map((d, i) => (i === last ? values.length / fixed : d < 0 ? 1 : d)), data: data(values) };
}
`;
}

/**
 * A model's names (its tensors' names: any string a model file carries) as a TypeScript string
 * literal, the only form in which the generator writes one, in code and in comments alike: JSON's
 * escapes, plus the two line terminators JSON leaves raw (U+2028/9 end a // comment) and the
 * star-slash that would end a block comment, so nothing in a name can become code.
 */
export function literal(value: string): string {
  return JSON.stringify(value).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`).replaceAll("*/", "*\\/");
}

const HANDLER_FUNCTION = `// NAME: POST /v1/functions/NAME with {"name": "..."} → {"greeting": "hello, ..."}.
// docs/guides/handlers.md: initialize/finalize, ctx.infer (call another function), replies that are not JSON.
import type { FunctionRequest, HandlerContext } from "tensorfn";

/** One answer per request, in order: calls that arrive together are handed over together. */
export function execute(requests: FunctionRequest[], ctx: HandlerContext): unknown[] {
  return requests.map((request) => {
    const body = request.json<{ name?: unknown } | null>();
    if (typeof body?.name !== "string") throw ctx.error('send {"name": "..."}'); // → 400, this message
    return { greeting: \`hello, \${body.name}\` };
  });
}
`;
