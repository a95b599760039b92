import { inferCall, jsonReply, modelConfig, modelMetadata, statistics, unhealthy } from "../call/mod.ts";
import type { Reply, ServerContext } from "../call/mod.ts";
import type { RouteHandlers, RouteRequest } from "./routes.ts";

/** What the KServe routes need from the runtime (gRPC's service needs the same: call/server-info.ts). */
export type KserveContext = ServerContext;

/** KServe v2 core routes plus Triton's model-configuration and statistics extensions (routes.ts holds their paths). */
export function kserveHandlers(ctx: KserveContext) {
  return {
    "server-metadata": () => jsonReply(200, ctx.server),
    health: (r: RouteRequest) => health(ctx, r.params.probe as "live" | "ready"),
    stats: (r: RouteRequest) => jsonReply(200, statistics(ctx.models, r.params.name, r.params.version)),
    "model-metadata": async (r: RouteRequest) => jsonReply(200, await modelMetadata(ctx.models, r.params.name!, r.params.version, r.body.signal)),
    "model-ready": (r: RouteRequest) => {
      const name = r.params.name!;
      const state = ctx.models.readiness(name, r.params.version);
      if (!state.ready) return jsonReply(503, { error: `model '${name}' version ${state.version} is not ready: ${state.reason}` });
      return jsonReply(200, { name, version: String(state.version), ready: true });
    },
    "model-config": async (r: RouteRequest) => jsonReply(200, await modelConfig(ctx.models, r.params.name!, r.params.version, r.body.signal)),
    infer: (r: RouteRequest) => inferCall(ctx, { name: r.params.name!, version: r.params.version, header: r.header, body: r.body }),
  } satisfies Partial<RouteHandlers>;
}

/** Server liveness or readiness (Kubernetes probes), as a reply. */
function health(ctx: KserveContext, which: "live" | "ready"): Reply {
  const why = unhealthy(ctx.models, which, ctx.draining, ctx.strictReadiness ?? true);
  return why === undefined ? jsonReply(200, which === "live" ? { live: true } : { ready: true }) : jsonReply(503, { error: why });
}
