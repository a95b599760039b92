import type * as z from "zod";
import { suggestion } from "./_suggest.ts";

/** A problem tied to a path in the config, before it is given a file and line. */
export interface PathProblem {
  path: PropertyKey[];
  problem: string;
  /** The problem is the key itself (an unknown field), not its value. */
  atKey?: boolean;
}

/**
 * Fields that Triton or a later tensorfn feature defines but this version does not accept yet,
 * keyed by the path of the object they appear in (indices dropped). They get "not supported yet"
 * rather than a misleading "did you mean".
 */
const NOT_YET: Record<string, readonly string[]> = {
  "": [
    "model_transaction_policy",
    "batch_input",
    "batch_output",
    "cc_model_filenames",
    "metric_tags",
    "model_metrics",
    "model_operations",
    "model_repository_agents",
    "runtime",
  ],
  input: ["allow_ragged_batch", "is_shape_tensor", "is_non_linear_format_io"],
  output: ["is_shape_tensor"],
  instance_group: ["passive", "profile", "secondary_devices"],
  optimization: ["cuda", "input_pinned_memory", "output_pinned_memory", "priority"],
};

/** Zod's own English messages; anything else was written by us and is passed through as is. */
const ZOD_DEFAULT = /^(Invalid|Too (small|big)|Unrecognized key)/;

/**
 * Turns zod issues into problems a person can act on: unknown fields get the nearest valid key,
 * enum errors quote the value and suggest one, type errors say what was expected and what came.
 * `input` is the parsed (pre-schema) value, to quote offending values from.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown, schema: z.ZodType, options: { described?: number } = {}): PathProblem[] {
  const problems: PathProblem[] = [];
  // Past `described` problems only their count matters (nobody lists 200 000): no suggestions computed for them.
  const described = options.described ?? Infinity;
  for (const issue of issues) {
    const path = [...issue.path];
    if (issue.code === "unrecognized_keys") {
      const valid = validKeysAt(schema, path) ?? [];
      for (const key of issue.keys) problems.push({ path: [...path, key], problem: problems.length < described ? unknownKey(key, path, valid) : "unknown field", atKey: true });
      continue;
    }
    const value = valueAt(input, path);
    problems.push({ path, problem: describe(issue, value) });
  }
  return problems;
}

function unknownKey(key: string, path: PropertyKey[], valid: readonly string[]): string {
  const level = path.filter((p) => typeof p === "string").join(".");
  if (NOT_YET[level]?.includes(key)) return "not supported yet";
  if (level === "output" && key === "optional") return "unknown field; 'optional' applies to inputs only";
  return `unknown field${suggestion(key, valid)}`;
}

function describe(issue: z.core.$ZodIssue, value: unknown): string {
  if (!ZOD_DEFAULT.test(issue.message)) return issue.message;
  if (value === undefined && (issue.code === "invalid_type" || issue.code === "invalid_value")) return "missing required field";
  switch (issue.code) {
    case "invalid_type":
      return `expected ${expected(issue.expected)}, got ${quote(value)}`;
    case "invalid_value": {
      const name = String([...issue.path].reverse().find((p) => typeof p === "string") ?? "value");
      const article = /^[aeiou]/i.test(name) ? "an" : "a";
      const valid = issue.values.map((v) => String(v));
      const quoted = issue.values.some((v) => typeof v === "string");
      return `${quote(value)} is not ${article} ${name}${suggestion(String(value), valid, quoted)}`;
    }
    case "too_small":
      if (issue.origin === "array") return "must not be empty";
      if (issue.origin === "string") return "must not be empty";
      return `must be ${issue.inclusive === false ? ">" : "≥"} ${String(issue.minimum)}, got ${quote(value)}`;
    case "too_big":
      return `must be ${issue.inclusive === false ? "<" : "≤"} ${String(issue.maximum)}, got ${quote(value)}`;
    default:
      return issue.message;
  }
}

function expected(type: string): string {
  const words: Record<string, string> = {
    int: "an integer",
    number: "an integer", // every numeric field of a model config is an integer
    string: "a string",
    boolean: "true or false",
    object: "a mapping",
    record: "a mapping",
    array: "a list",
  };
  return words[type] ?? type;
}

/** How a value is quoted in a problem: strings in '', containers by kind, null as empty. */
function quote(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  if (value === null) return "an empty value";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return String(value);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const segment of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
}

function def(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** Looks through wrappers (optional, default, preprocess…) to the schema that does the work. */
function unwrap(schema: z.ZodType): z.ZodType {
  for (;;) {
    const d = def(schema);
    if (d.innerType) schema = d.innerType;
    else if (d.type === "pipe" && d.in && d.out) schema = def(d.out).type === "transform" ? d.in : d.out;
    else return schema;
  }
}

/** The keys an object schema accepts at `path`, or undefined if the path leads elsewhere. */
function validKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | undefined {
  let current = unwrap(schema);
  for (const segment of path) {
    const d = def(current);
    const next = d.type === "object" ? d.shape?.[String(segment)] : d.type === "array" ? d.element : d.valueType;
    if (!next) return undefined;
    current = unwrap(next);
  }
  const d = def(current);
  return d.type === "object" && d.shape ? Object.keys(d.shape) : undefined;
}
