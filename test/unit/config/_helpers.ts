import { expect } from "vitest";
import { type ConfigIssue, formatIssue, parseFunctionConfig } from "../../../runtime/config/mod.ts";
import type { DeclaredConfig } from "../../../runtime/config/mod.ts";
import type { TensorSignature } from "../../../runtime/core/mod.ts";

export const FILE = "functions/simple/function.yaml";

/** Parses YAML for function 'simple' and returns the issues as `file:line: field: problem` lines. */
export function issuesOf(yaml: string, name = "simple"): string[] {
  const result = parseFunctionConfig(yaml, { file: FILE, name });
  expect(result.config).toBeUndefined();
  return result.errors.map(formatIssue);
}

/** Parses YAML that must be valid and returns the declared config. */
export function declared(yaml: string, name = "simple"): DeclaredConfig {
  const result = parseFunctionConfig(yaml, { file: FILE, name });
  expect(result.errors.map((e: ConfigIssue) => formatIssue(e))).toEqual([]);
  return result.config!;
}

/** `"x:FP32:[-1,16]"` → a tensor signature, to write model signatures compactly. */
export function sig(spec: string): TensorSignature {
  const [name, datatype, shape] = spec.split(":");
  return { name: name!, datatype: datatype as TensorSignature["datatype"], shape: JSON.parse(shape!) as number[] };
}

/** Removes the common leading indentation so YAML can be written indented in tests. */
export function yaml(strings: TemplateStringsArray, ...values: unknown[]): string {
  const text = String.raw({ raw: strings }, ...values).replace(/^\n/, "");
  const indent = Math.min(...text.split("\n").filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return text
    .split("\n")
    .map((l) => l.slice(indent))
    .join("\n");
}
