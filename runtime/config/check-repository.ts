import { FileRefused } from "../core/mod.ts";
import type { ModelSignature, Platform } from "../core/mod.ts";
import type { ConfigIssue } from "./config-issue.ts";
import { completeConfig, ConfigContradiction } from "./complete-config.ts";
import type { DeclaredConfig } from "./declared-config.ts";
import { ensembleWiringProblems } from "./_ensemble-rules.ts";
import type { FunctionConfig } from "./function-config.ts";
import { FUNCTION_NAME_RULE, functionNameProblem, MAX_VERSION, parseVersion, quoteName } from "./function-name.ts";
import type { LoadLimits } from "./load-limits.ts";
import { resolveInside } from "./model-path.ts";
import { CONFIG_FILE_LIMITS, parseFunctionConfig } from "./parse-function-config.ts";
import { configFileOf, FUNCTION_FILE, lineInConfigFile, parseConfigFile } from "./config-file.ts";

/** What checking a repository reads: a subset of `Platform`, so the real one can be passed. */
export type RepositoryReader = Pick<Platform, "readDir" | "readTextFile" | "realPath">;

/** Issues in one function.yaml's text (syntax, schema, cross-field rules); [] when it is valid. */
export function checkFunctionConfig(name: string, file: string, text: string, limits?: LoadLimits): ConfigIssue[] {
  return parseFunctionConfig(text, { file, name, limits }).errors;
}

/**
 * Checks a repository for `tensorfn check <dir>` with the rules a load applies: every sub-folder (but hidden ones) is a function whose name must follow the naming
 * rule; its function.yaml, when present, must parse and stay within `limits` (a folder without one
 * is valid: everything is completed from the model); warm-up samples must fit the declared inputs;
 * it needs at least one numeric version folder (≤ MAX_VERSION), and each must hold the model file
 * (`default_model_filename`; a file or a folder, for models with external data) whose real path
 * stays inside the function's folder. Identity functions have no model file and need only a version
 * folder. A handler must resolve inside the folder and, with `checkModule`, compile (syntax and
 * relative imports, nothing run). Folder-level issues carry line 0, meaning "no line: the folder itself".
 * With `signatureOf`, every version's model is opened as a load opens it and the config completed
 * from it (a file that is no model, a tensor the model lacks, a type or dims that disagree);
 * what a load alone does (warm-up runs, instances) is left to it.
 */
export interface CheckOptions {
  limits?: LoadLimits;
  /**
   * Reads a model file's inputs and outputs (the CLI opens it with onnxruntime). With it, each
   * model is checked against its config, and each ensemble's wiring against its steps' effective
   * configs, as a load would; without it (`check --no-models`), models are only found, and wiring
   * checked against steps whose config stands without a model (handlers, identity, ensembles).
   */
  signatureOf?: (modelPath: string) => Promise<ModelSignature>;
  /** Compiles a handler without running it (`Platform.checkModule`); with it, each handler's syntax and relative imports are checked as a load checks them. */
  checkModule?: Platform["checkModule"];
}

export async function checkRepository(reader: RepositoryReader, dir: string, options: CheckOptions = {}): Promise<ConfigIssue[]> {
  // Each model is opened once: by its function's check, and again by the ensembles that step through it.
  const opened = new Map<string, Promise<ModelSignature>>();
  const given = options.signatureOf;
  const signatureOf = given && ((path: string) => opened.get(path) ?? (opened.set(path, given(path)), opened.get(path)!));
  let entries;
  try {
    entries = await reader.readDir(dir);
  } catch (cause) {
    return [{ file: dir, line: 0, field: "", problem: `cannot read the repository: ${(cause as Error).message}` }];
  }
  const functions = entries.filter((e) => e.isDirectory && !e.name.startsWith(".")).map((e) => e.name).sort();
  const issues: ConfigIssue[] = [];
  const parsed = new Map<string, Parsed>();
  for (const name of functions) {
    if (functionNameProblem(name)) {
      issues.push({ file: `${dir}/${quoteName(name)}`, line: 0, field: "name", problem: `skipped at load: ${FUNCTION_NAME_RULE}` });
      continue;
    }
    issues.push(...(await checkFunction(reader, `${dir}/${name}`, name, { ...options, signatureOf }, parsed)));
  }
  issues.push(...(await checkEnsembles(reader, parsed, signatureOf)));
  return issues;
}

/** What checkFunction learned of a function that parsed cleanly, for the ensemble pass. */
interface Parsed {
  folder: string;
  file: string;
  text: string;
  declared: DeclaredConfig;
  versions: number[];
}

/**
 * Each ensemble's wiring against its steps' effective configs (names, required inputs, one
 * datatype and compatible dims per tensor, batch sizes), with the step's line. An ensemble whose
 * steps cannot all be completed here (a step with problems of its own, a model not readable)
 * is left to the load, which says why.
 */
async function checkEnsembles(reader: RepositoryReader, parsed: Map<string, Parsed>, signatureOf: CheckOptions["signatureOf"]): Promise<ConfigIssue[]> {
  const effective = new Map<string, Promise<FunctionConfig | undefined>>();
  const complete = (name: string): Promise<FunctionConfig | undefined> => {
    const cached = effective.get(name);
    if (cached) return cached;
    const result = (async () => {
      const p = parsed.get(name);
      if (!p) return undefined;
      if (["handler", "identity", "ensemble"].includes(p.declared.backend)) return completeConfig(p.declared, { inputs: [], outputs: [] });
      if (!signatureOf || p.versions.length === 0) return undefined;
      const model = await resolveInside(reader, p.folder, `${p.versions.at(-1)}/${p.declared.default_model_filename}`);
      return model === undefined ? undefined : completeConfig(p.declared, await signatureOf(model));
    })().catch(() => undefined); // the load reports what is wrong with the step itself
    effective.set(name, result);
    return result;
  };
  const issues: ConfigIssue[] = [];
  for (const p of parsed.values()) {
    const steps = p.declared.ensemble_scheduling?.step;
    if (p.declared.backend !== "ensemble" || !steps) continue;
    const functions = await Promise.all(steps.map((step) => complete(step.model_name)));
    if (functions.some((f) => f === undefined)) continue;
    const ensemble = await complete(p.declared.name);
    if (!ensemble) continue;
    for (const problem of ensembleWiringProblems(ensemble, functions as FunctionConfig[])) {
      // A problem names the first step it is about: point at that step's line.
      const step = /step (\d+) /.exec(problem)?.[1];
      const path = step === undefined ? ["ensemble_scheduling"] : ["ensemble_scheduling", "step", Number(step)];
      issues.push({ file: p.file, line: lineInConfigFile(p.file, p.text, path), field: step === undefined ? "ensemble_scheduling" : `ensemble_scheduling.step[${step}]`, problem });
    }
  }
  return issues;
}

async function checkFunction(reader: RepositoryReader, folder: string, name: string, options: CheckOptions, parsedOut: Map<string, Parsed>): Promise<ConfigIssue[]> {
  const { limits, checkModule, signatureOf } = options;
  const entries = await reader.readDir(folder);
  const issues: ConfigIssue[] = [];
  let modelFile = "model.onnx";
  let identity = false;
  let handler: string | undefined;
  let steps: string[] = [];
  let clean: Omit<Parsed, "versions"> | undefined;
  const configName = configFileOf(entries.filter((e) => e.isFile).map((e) => e.name));
  if (configName) {
    const file = `${folder}/${configName}`;
    let text: string;
    try {
      text = await reader.readTextFile(file, { maxBytes: CONFIG_FILE_LIMITS.bytes });
    } catch (error) {
      return [...issues, { file, line: 0, field: "", problem: error instanceof FileRefused ? error.message : "cannot be read" }];
    }
    const checked = parseConfigFile(text, { file, name, limits });
    issues.push(...checked.errors);
    if (checked.config && checked.errors.length === 0) clean = { folder, file, text, declared: checked.config };
    // A config over a ceiling still names its model file and backend: read them without the ceilings.
    const parsed = checked.config || !limits ? checked : parseConfigFile(text, { file, name });
    if (parsed.config) {
      modelFile = parsed.config.default_model_filename;
      // Neither an identity nor a handler function has a model file.
      identity = ["identity", "handler", "ensemble"].includes(parsed.config.backend);
      steps = parsed.config.ensemble_scheduling?.step.map((s) => s.model_name) ?? [];
      handler = parsed.config.handler;
    }
  } else {
    // No function.yaml: everything comes from the model, as at load.
    const defaults = parseFunctionConfig("", { file: `${folder}/${FUNCTION_FILE}`, name });
    if (defaults.config) clean = { folder, file: `${folder}/${FUNCTION_FILE}`, text: "", declared: defaults.config };
  }
  const versions: number[] = [];
  for (const entry of entries.filter((e) => e.isDirectory)) {
    const version = parseVersion(entry.name);
    if (version === "too-large") {
      issues.push({ file: `${folder}/${entry.name}`, line: 0, field: "version", problem: `ignored at load: versions go up to ${MAX_VERSION}` });
    } else if (version !== undefined) {
      versions.push(version);
    }
  }
  versions.sort((a, b) => a - b);
  if (clean) parsedOut.set(name, { ...clean, versions });
  if (versions.length === 0) {
    const problem = identity ? "no version folder (1/, 2/…)" : `no version folder with ${modelFile}`;
    return [...issues, { file: folder, line: 0, field: "version", problem }];
  }
  const siblings = new Set((await reader.readDir(folder.slice(0, folder.lastIndexOf("/")) || ".")).filter((e) => e.isDirectory).map((e) => e.name));
  steps.forEach((step, i) => {
    if (!siblings.has(step)) issues.push({ file: `${folder}/${configName ?? FUNCTION_FILE}`, line: 0, field: `ensemble_scheduling.step[${i}].model_name`, problem: `no function '${step}' in the repository` });
  });
  const handlerPath = handler === undefined ? undefined : await resolveInside(reader, folder, handler);
  if (handler !== undefined && !handlerPath) {
    issues.push({ file: `${folder}/${configName ?? FUNCTION_FILE}`, line: 0, field: "handler", problem: `${handler} was not found inside the function's folder` });
  }
  if (handlerPath && checkModule) {
    for (const p of await checkModule(handlerPath, folder)) issues.push({ file: `${folder}/${p.file}`, line: p.line, column: p.column, field: "", problem: p.message });
  }
  if (identity) return issues;
  for (const version of versions) {
    const model = await resolveInside(reader, folder, `${version}/${modelFile}`);
    if (!model) {
      issues.push({ file: `${folder}/${version}`, line: 0, field: "version", problem: `no ${modelFile} in version folder ${version}` });
    } else if (signatureOf && clean) {
      issues.push(...(await modelProblems(`${folder}/${version}/${modelFile}`, model, clean, signatureOf)));
    }
  }
  return issues;
}

/**
 * What a load finds when it opens a version's model: a file onnxruntime cannot read, or a config
 * that contradicts the model (names, types, dims, batching), at the line of the tensor named.
 */
async function modelProblems(shown: string, model: string, config: Omit<Parsed, "versions">, signatureOf: NonNullable<CheckOptions["signatureOf"]>): Promise<ConfigIssue[]> {
  let signature: ModelSignature;
  try {
    signature = await signatureOf(model);
  } catch (error) {
    return [{ file: shown, line: 0, field: "", problem: `onnxruntime cannot open it: ${(error as Error).message}` }];
  }
  try {
    completeConfig(config.declared, signature, { configFile: config.file.slice(config.file.lastIndexOf("/") + 1) });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigContradiction)) return [{ file: config.file, line: 0, field: "", problem: (error as Error).message }];
    return error.problems.map((problem) => {
      // Each contradiction at the line of the tensor it names, where the config lists it.
      const named = /(input|output) '([^']*)'/.exec(problem);
      const kind = named?.[1] as "input" | "output" | undefined;
      const index = kind ? config.declared[kind].findIndex((t) => t.name === named![2]) : -1;
      const path = index >= 0 ? [kind!, index] : kind ? [kind] : [];
      const line = path.length > 0 && config.text ? lineInConfigFile(config.file, config.text, path) : 0;
      return { file: config.file, line, field: "", problem };
    }).sort((a, b) => a.line - b.line);
  }
}
