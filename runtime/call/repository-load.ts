import { invalidArg, RuntimeError } from "../core/mod.ts";
import { CONFIG_FILE_LIMITS, functionNameProblem, MAX_VERSION, modelPathProblem, parseTritonJsonConfig, parseVersion } from "../config/mod.ts";
import type { DeclaredConfig, LoadLimits } from "../config/mod.ts";
import type { UploadedFiles } from "../lifecycle/mod.ts";

// Triton's model-repository extension, as every protocol reads a call to it.

/** The function name a repository call names, checked before its body is read (400 naming the rule). */
export function repositoryName(name: string): string {
  const problem = functionNameProblem(name);
  if (problem) throw invalidArg(`invalid function name: ${problem}`);
  return name;
}

/**
 * `parameters.config` (the model configuration as a JSON string, Triton's field names) and
 * `file:<version>/<path>` entries (the file's content: base64 text in JSON, bytes over gRPC) →
 * overrides for ModelManager.load(). Each version given files must be given its model file
 * (`default_model_filename`); the others are what the model reads beside it (its external data).
 */
export function loadOverrides(name: string, parameters: Record<string, unknown>, limits: LoadLimits): { config?: DeclaredConfig; files?: UploadedFiles } {
  const result: { config?: DeclaredConfig; files?: Map<number, Map<string, Uint8Array>> } = {};
  if (parameters.config !== undefined) {
    if (typeof parameters.config !== "string") throw invalidArg("parameters.config must be a string holding the model configuration as JSON");
    if (parameters.config.length > CONFIG_FILE_LIMITS.chars) {
      throw invalidArg(`failed to load '${name}': parameters.config has ${parameters.config.length} characters; a configuration may have at most ${CONFIG_FILE_LIMITS.chars}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(parameters.config);
    } catch (error) {
      throw invalidArg(`failed to load '${name}': parameters.config is not valid JSON: ${(error as Error).message}`);
    }
    try {
      result.config = parseTritonJsonConfig(json, name, limits);
    } catch (error) {
      throw invalidArg(`failed to load '${name}': ${(error as RuntimeError).message}`);
    }
  }
  for (const [key, value] of Object.entries(parameters)) {
    if (!key.startsWith("file:")) continue;
    const match = /^file:([1-9][0-9]*)\/(.+)$/.exec(key);
    if (!match) throw invalidArg(`parameter ${JSON.stringify(key)} must look like 'file:<version>/<file name>'`);
    if (parseVersion(match[1]!) === "too-large") throw invalidArg(`parameter ${JSON.stringify(key)}: version ${match[1]} is over ${MAX_VERSION}`);
    if (!result.config) throw invalidArg(`failed to load '${name}': '${key}' needs parameters.config as well (Triton's rule)`);
    const problem = modelPathProblem(match[2]!);
    if (problem) throw invalidArg(`failed to load '${name}': parameter '${key}': the path ${problem}`);
    if (typeof value !== "string" && !(value instanceof Uint8Array)) throw invalidArg(`parameter '${key}' must be base64 text (or bytes over gRPC)`);
    result.files ??= new Map();
    const version = Number(match[1]);
    if (!result.files.has(version)) result.files.set(version, new Map());
    result.files.get(version)!.set(match[2]!, typeof value === "string" ? decodeBase64(value, key) : value);
  }
  for (const [version, files] of result.files ?? []) {
    const model = result.config!.default_model_filename;
    if (!files.has(model)) throw invalidArg(`failed to load '${name}': version ${version} is given ${[...files.keys()].map((f) => `'file:${version}/${f}'`).join(", ")} but not its model file 'file:${version}/${model}'`);
  }
  return result;
}

function decodeBase64(text: string, key: string): Uint8Array {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    throw invalidArg(`parameter '${key}' is not valid base64`);
  }
}
