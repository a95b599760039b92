import { createRegistry, ScalarType, toJson } from "@bufbuild/protobuf";
import type { DescMessage } from "@bufbuild/protobuf";
import { Document, isMap, isScalar, isSeq, visit } from "yaml";
import { fromText } from "@bufbuild/protobuf/txtpb";
import type { ConfigIssue } from "./config-issue.ts";
import { fieldPath } from "./config-issue.ts";
import { functionSchema } from "./function-schema.ts";
import { toDeclared } from "./_to-declared.ts";
import { describeIssues } from "./_describe-issues.ts";
import type { PathProblem } from "./_describe-issues.ts";
import { limitProblems } from "./load-limits.ts";
import type { LoadLimits } from "./load-limits.ts";
import { bounded, CONFIG_FILE_LIMITS } from "./parse-function-config.ts";
import type { ParseResult } from "./parse-function-config.ts";
import { suggestion } from "./_suggest.ts";
import { faultLine, pbtxtLines, tokensOfLine, unclosedBracket } from "./_pbtxt-lines.ts";
import { file_model_config, ModelConfigSchema } from "./proto/model_config_pb.ts";

/** Triton's config file name: read where function.yaml is absent. */
export const TRITON_CONFIG_FILE = "config.pbtxt";

/**
 * Fields of Triton's ModelConfig that change nothing here (GPU, CUDA-graph and pinned-memory
 * tuning, agents, tags): read, named once in the load's log, and left out.
 */
const IGNORED = [
  "cc_model_filenames", "metric_tags", "model_repository_agents", "runtime", "model_metrics",
  "optimization.priority", "optimization.cuda", "optimization.input_pinned_memory",
  "optimization.output_pinned_memory", "optimization.gather_kernel_buffer_threshold", "optimization.eager_batching",
  "input[].is_non_linear_format_io", "output[].is_non_linear_format_io",
  "instance_group[].profile", "instance_group[].passive", "instance_group[].secondary_devices",
  "ensemble_scheduling.max_inflight_requests", "ensemble_scheduling.step[].model_namespace",
];

/** Fields that would change what a model computes or how it is called, and that tensorfn does not do: refused, saying so. */
const REFUSED: Record<string, string> = {
  "model_transaction_policy.decoupled": "decoupled models (several responses per request) are not supported yet",
  batch_input: "batch inputs are not supported",
  batch_output: "batch outputs are not supported",
  model_operations: "custom operation libraries are not loaded; the model must run on onnxruntime's own operators",
  "input[].is_shape_tensor": "shape tensors are not supported",
  "input[].allow_ragged_batch": "ragged batches are not supported",
  "output[].is_shape_tensor": "shape tensors are not supported",
};

const registry = createRegistry(file_model_config);

/**
 * Reads a Triton `config.pbtxt` (protobuf text format against Triton's ModelConfig, parsed by
 * @bufbuild/protobuf's txtpb), then checks it with the rules of Triton's JSON form, which has the
 * same field names. Every issue carries the line of the field at fault (`config.pbtxt:4:
 * max_batch_sise: unknown field; did you mean 'max_batch_size'?`). `ignored` lists the Triton
 * fields that were present and change nothing here, for the load to name once.
 */
export function parsePbtxtConfig(text: string, options: { file: string; name: string; limits?: LoadLimits; anyName?: boolean }): ParseResult & { ignored: string[] } {
  const issue = (line: number, field: string, problem: string): ConfigIssue => ({ file: options.file, line, field, problem: bounded(problem) });
  if (text.length > CONFIG_FILE_LIMITS.chars) {
    return { errors: [issue(1, "", `the file has ${text.length} characters; a config.pbtxt may have at most ${CONFIG_FILE_LIMITS.chars}`)], ignored: [] };
  }
  let json: Record<string, unknown>;
  try {
    const message = fromText(ModelConfigSchema, text, { recursionLimit: CONFIG_FILE_LIMITS.depth });
    json = numbers(toJson(ModelConfigSchema, message, { useProtoFieldName: true }), ModelConfigSchema) as Record<string, unknown>;
  } catch (error) {
    return { errors: [textError(text, (error as Error).message, issue)], ignored: [] };
  }
  // As function.yaml: a bounded number of values before the schema checks each (256 kB of `{},` is 40,000 of them).
  if (countValues(json, CONFIG_FILE_LIMITS.values) > CONFIG_FILE_LIMITS.values) {
    return { errors: [issue(1, "", `holds more than ${CONFIG_FILE_LIMITS.values} values`)], ignored: [] };
  }
  const lineOf = pbtxtLines(text, ModelConfigSchema);
  const locate = (p: PathProblem) => issue(lineOf(p.path), fieldPath(p.path), p.problem);

  const refused: PathProblem[] = [];
  for (const [field, why] of Object.entries(REFUSED)) for (const path of present(json, field)) refused.push({ path, problem: why });
  if (refused.length > 0) return { errors: refused.slice(0, CONFIG_FILE_LIMITS.problems).map(locate), ignored: [] };
  const ignored = IGNORED.flatMap((field) => present(json, field, true).map(fieldPath));

  const schema = functionSchema("json");
  const result = schema.safeParse(json);
  const problems = result.success ? [] : describeIssues(result.error.issues, json, schema, { described: CONFIG_FILE_LIMITS.problems });
  if (typeof json.name === "string" && json.name !== options.name && !options.anyName) {
    problems.push({ path: ["name"], problem: `'${json.name}' does not match the folder name '${options.name}'; rename one or remove name` });
  }
  if (!result.success || problems.length > 0) return { errors: problems.slice(0, CONFIG_FILE_LIMITS.problems).map(locate).sort((a, b) => a.line - b.line), ignored };
  const config = toDeclared(result.data, options.name);
  const over = options.limits ? limitProblems(config, options.limits) : [];
  if (over.length > 0) return { errors: over.slice(0, CONFIG_FILE_LIMITS.problems).map(locate), ignored };
  return { config, errors: [], ignored };
}

/**
 * A text-format error as an issue, at the line where the parser stopped (faultLine), or for an
 * input that ends too soon, where the bracket left open was opened; an unknown field or enum
 * value gets the nearest valid name.
 */
function textError(text: string, message: string, issue: (line: number, field: string, problem: string) => ConfigIssue): ConfigIssue {
  const parse = (prefix: string) => void fromText(ModelConfigSchema, prefix, { recursionLimit: CONFIG_FILE_LIMITS.depth });
  if (/end of input/.test(message)) {
    const open = unclosedBracket(text);
    if (open) return issue(open.line, "", `invalid text format: the '${open.text}' here is never closed (${message})`);
  }
  const line = faultLine(text, message, parse);
  const field = /unknown field "([^"]+)" for message ([\w.]+)/.exec(message);
  if (field) {
    const fields = registry.getMessage(field[2]!)?.fields.map((f) => f.name) ?? [];
    return issue(line, field[1]!, `unknown field${suggestion(field[1]!, fields)}`);
  }
  const value = /unknown enum value "([^"]+)" for enum ([\w.]+)/.exec(message);
  if (value) {
    const values = registry.getEnum(value[2]!)?.values.map((v) => v.name) ?? [];
    return issue(line, "", `'${value[1]}' is not a ${value[2]!.split(".").pop()}${suggestion(value[1]!, values)}`);
  }
  const oneof = /oneof "([^"]+)" is already set/.exec(message);
  if (oneof) {
    const fields = [...registry].flatMap((t) => (t.kind === "message" ? t.oneofs.filter((o) => o.name === oneof[1]) : [])).flatMap((o) => o.fields.map((f) => f.name));
    const words = tokensOfLine(text, line);
    return issue(line, fields.filter((f) => words.has(f)).at(-1) ?? "", `only one of ${fields.join(", ")} may be set (Triton's oneof ${oneof[1]})`);
  }
  if (/U\+000A in string/.test(message)) return issue(line, "", "invalid text format: a string is not closed on its line");
  // A message that names no token ("invalid number") is shown with the line it is about.
  const shown = /got |"/.test(message) ? "" : ` in '${bounded(text.split("\n")[line - 1]!.trim()).slice(0, 80)}'`;
  return issue(line, "", `invalid text format: ${message}${shown}`);
}

/**
 * `tensorfn convert`: a config.pbtxt as the function.yaml that reads the same — the fields it
 * sets, in YAML, with those tensorfn ignores left out and named in a comment. Issues as a load
 * would report them, and no YAML, when the config.pbtxt does not load.
 */
export function convertPbtxt(text: string, options: { file: string; name: string }): { yaml?: string; errors: ConfigIssue[]; ignored: string[] } {
  const parsed = parsePbtxtConfig(text, options);
  if (parsed.errors.length > 0) return { errors: parsed.errors, ignored: parsed.ignored };
  const json = numbers(toJson(ModelConfigSchema, fromText(ModelConfigSchema, text), { useProtoFieldName: true }), ModelConfigSchema) as Record<string, unknown>;
  for (const field of IGNORED) present(json, field, true);
  delete json.name; // the folder names the function
  const head = [`# ${options.name}: converted from ${TRITON_CONFIG_FILE} by \`tensorfn convert\` (the same fields, in YAML).`];
  if (parsed.ignored.length > 0) head.push(`# Left out (no effect in tensorfn): ${parsed.ignored.join(", ")}.`);
  dropEmpty(json);
  const body = Object.keys(json).length > 0 ? compactYaml(json) : "";
  return { yaml: `${head.join("\n")}\n${body}`, errors: [], ignored: parsed.ignored };
}

/** YAML as this repository writes function.yaml: small collections of plain values on one line (`{ name: x, dims: [16] }`). */
function compactYaml(json: unknown): string {
  const doc = new Document(json);
  const flat = (node: unknown): boolean => isScalar(node) || ((isSeq(node) || isMap(node)) && Boolean((node as { flow?: boolean }).flow));
  const visitor = {
    Seq: (_: unknown, node: { items: unknown[]; flow?: boolean }) => {
      if (node.items.length <= 16 && node.items.every(flat)) node.flow = true;
    },
    Map: (_: unknown, node: { items: { value: unknown }[]; flow?: boolean }) => {
      if (node.items.length <= 6 && node.items.every((pair) => flat(pair.value))) node.flow = true;
    },
  };
  // Visits go parent first: a second pass sees the children the first one made flat.
  for (let pass = 0; pass < 2; pass++) visit(doc, visitor);
  // The top level stays a block: one field per line.
  if (isMap(doc.contents)) doc.contents.flow = false;
  return doc.toString({ flowCollectionPadding: true });
}

/** Objects left empty once ignored fields are gone (`optimization: {}` after its `cuda` went). */
function dropEmpty(node: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(node)) {
    if (value && typeof value === "object" && !Array.isArray(value)) {
      dropEmpty(value as Record<string, unknown>);
      if (Object.keys(value).length === 0 && IGNORED.some((f) => f.startsWith(`${key}.`))) delete node[key];
    }
  }
}

/** Triton's JSON writes 64-bit integers as strings: numbers again, by the schema (a name that looks like a number stays a string). */
function numbers(value: unknown, desc: DescMessage): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    const field = desc.fields.find((f) => f.name === name);
    const wide = (t: ScalarType | undefined) => t === ScalarType.INT64 || t === ScalarType.UINT64 || t === ScalarType.SINT64 || t === ScalarType.FIXED64 || t === ScalarType.SFIXED64;
    const number = (x: unknown) => (typeof x === "string" && /^-?\d+$/.test(x) ? Number(x) : x);
    if (!field) out[name] = v;
    else if (field.fieldKind === "scalar") out[name] = wide(field.scalar) ? number(v) : v;
    else if (field.fieldKind === "list") out[name] = Array.isArray(v) ? v.map((x) => (field.listKind === "scalar" ? (wide(field.scalar) ? number(x) : x) : field.listKind === "message" ? numbers(x, field.message) : x)) : v;
    else if (field.fieldKind === "map") out[name] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, field.mapKind === "message" ? numbers(x, field.message) : x]));
    else if (field.fieldKind === "message") out[name] = numbers(v, field.message);
    else out[name] = v;
  }
  return out;
}

/** Values in a JSON tree (objects and lists count one each), counting no further than `limit` + 1. */
function countValues(node: unknown, limit: number): number {
  let n = 0;
  const walk = (v: unknown) => {
    if (++n > limit) return;
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v !== null && typeof v === "object") for (const x of Object.values(v)) walk(x);
  };
  walk(node);
  return n;
}

/** The paths in `json` where `field` (dotted, `[]` for every item of a list) is set; `strip` deletes them. */
function present(json: Record<string, unknown>, field: string, strip = false): PropertyKey[][] {
  const found: PropertyKey[][] = [];
  const walk = (node: unknown, parts: string[], path: PropertyKey[]) => {
    if (node === null || typeof node !== "object") return;
    const [head, ...rest] = parts;
    const list = head!.endsWith("[]");
    const name = list ? head!.slice(0, -2) : head!;
    const value = (node as Record<string, unknown>)[name];
    if (value === undefined) return;
    if (rest.length === 0) {
      found.push([...path, name]);
      if (strip) delete (node as Record<string, unknown>)[name];
    } else if (list && Array.isArray(value)) {
      value.forEach((item, i) => walk(item, rest, [...path, name, i]));
    } else {
      walk(value, rest, [...path, name]);
    }
  };
  walk(json, field.split("."), []);
  return found;
}
