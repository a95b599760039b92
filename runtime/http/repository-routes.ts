import { invalidArg, RuntimeError } from "../core/mod.ts";
import { CONFIG_FILE_LIMITS, functionNameProblem, MAX_VERSION, parseTritonJsonConfig, parseVersion } from "../config/mod.ts";
import type { DeclaredConfig, LoadLimits } from "../config/mod.ts";
import { jsonReply, readBody } from "../call/mod.ts";
import type { CallContext } from "../call/mod.ts";
import type { RouteHandlers, RouteRequest } from "./routes.ts";

/** Triton's model-repository extension: index, load (with config and file overrides), unload; and our park. */
export function repositoryHandlers(ctx: Pick<CallContext, "models" | "maxInputBytes">) {
  const json = (r: RouteRequest) => jsonBody(r, ctx.maxInputBytes);
  return {
    "repository-index": async (r: RouteRequest) => {
      const readyOnly = (await json(r)).ready === true;
      return jsonReply(200, ctx.models.index({ readyOnly }).map((e) => (e.version ? e : { name: e.name, state: e.state, reason: e.reason })));
    },
    "repository-load": async (r: RouteRequest) => {
      const name = validName(r.params.name!);
      const parameters = ((await json(r)).parameters ?? {}) as Record<string, unknown>;
      await ctx.models.load(name, overrides(name, parameters, ctx.models.limits));
      return jsonReply(200, { name, load: true });
    },
    // Ours: park a READY function now (release its sessions, keep its bytes), as the idle timeout would.
    "repository-park": async (r: RouteRequest) => {
      const name = validName(r.params.name!);
      await json(r);
      await ctx.models.park(name);
      return jsonReply(200, { name, park: true });
    },
    // Triton's optional `unload_dependents`: an ensemble's composing functions unload with it.
    // Ours, `disable`: in lazy mode an unloaded function is cold (its next request loads it)
    // unless disabled, when it stays unavailable until loaded again.
    "repository-unload": async (r: RouteRequest) => {
      const name = validName(r.params.name!);
      const parameters = (await json(r)).parameters ?? {};
      if (typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) throw invalidArg("parameters must be a JSON object");
      const dependents = (parameters as Record<string, unknown>).unload_dependents ?? false;
      if (typeof dependents !== "boolean") throw invalidArg(`parameters.unload_dependents must be true or false, not ${JSON.stringify(dependents)}`);
      const disable = (parameters as Record<string, unknown>).disable ?? false;
      if (typeof disable !== "boolean") throw invalidArg(`parameters.disable must be true or false, not ${JSON.stringify(disable)}`);
      const unloaded = await ctx.models.unload(name, { dependents, disable });
      return jsonReply(200, dependents ? { name, unload: true, unloaded } : { name, unload: true });
    },
  } satisfies Partial<RouteHandlers>;
}

/** The function name of a repository route, checked before the body is read (400 naming the rule). */
function validName(name: string): string {
  const problem = functionNameProblem(name);
  if (problem) throw invalidArg(`invalid function name: ${problem}`);
  return name;
}

/** An optional JSON object body (Triton accepts an empty one). */
async function jsonBody(request: RouteRequest, limit: number): Promise<Record<string, unknown>> {
  const bytes = await readBody(request.header, request.body, limit);
  if (bytes.byteLength === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw invalidArg(`malformed JSON in request body: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw invalidArg("request body must be a JSON object");
  return parsed as Record<string, unknown>;
}

/**
 * `parameters.config` (the model configuration as a JSON string, Triton's field names) and
 * `file:<version>/<file>` entries (base64 content) → overrides for ModelManager.load().
 */
function overrides(name: string, parameters: Record<string, unknown>, limits: LoadLimits): { config?: DeclaredConfig; files?: Map<number, Uint8Array> } {
  const result: { config?: DeclaredConfig; files?: Map<number, Uint8Array> } = {};
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
    if (match[2] !== result.config.default_model_filename) {
      throw invalidArg(`failed to load '${name}': '${key}' names '${match[2]}', but only the model file '${result.config.default_model_filename}' can be supplied`);
    }
    if (typeof value !== "string") throw invalidArg(`parameter '${key}' must be base64 text`);
    result.files ??= new Map();
    result.files.set(Number(match[1]), decodeBase64(value, key));
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
