import { invalidArg } from "../core/mod.ts";
import { jsonReply, loadOverrides, readBody, repositoryName, rolloutChange } from "../call/mod.ts";
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
      const name = repositoryName(r.params.name!);
      const parameters = ((await json(r)).parameters ?? {}) as Record<string, unknown>;
      await ctx.models.load(name, loadOverrides(name, parameters, ctx.models.limits));
      return jsonReply(200, { name, load: true });
    },
    // Ours: park a READY function now (release its sessions, keep its bytes), as the idle timeout would.
    "repository-park": async (r: RouteRequest) => {
      const name = repositoryName(r.params.name!);
      await json(r);
      await ctx.models.park(name);
      return jsonReply(200, { name, park: true });
    },
    // Ours: a rollout's share as it stands (GET), or changed without a reload (POST: `{percent}`, `{promote: true}`, `{abort: true}`).
    "repository-rollout": (r: RouteRequest) => {
      const name = repositoryName(r.params.name!);
      return jsonReply(200, { name, ...ctx.models.rollout(name) });
    },
    "repository-rollout-change": async (r: RouteRequest) => {
      const name = repositoryName(r.params.name!);
      return jsonReply(200, { name, ...ctx.models.rollout(name, rolloutChange(await json(r))) });
    },
    // Triton's optional `unload_dependents`: an ensemble's composing functions unload with it.
    // Ours, `disable`: in lazy mode an unloaded function is cold (its next request loads it)
    // unless disabled, when it stays unavailable until loaded again.
    "repository-unload": async (r: RouteRequest) => {
      const name = repositoryName(r.params.name!);
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

/** An optional JSON object body (Triton accepts an empty one). */
export async function jsonBody(request: RouteRequest, limit: number): Promise<Record<string, unknown>> {
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
