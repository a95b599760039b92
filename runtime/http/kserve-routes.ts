import type { Context, Hono } from "hono";
import { toTritonJson } from "../config/mod.ts";
import type { TensorConfig } from "../config/mod.ts";
import { fromConfigType } from "../tensor/mod.ts";
import type { Deployment } from "../lifecycle/mod.ts";
import { jsonError, jsonReply, toResponse } from "./error-status.ts";
import type { Reply } from "./error-status.ts";
import { inferCall } from "./infer-call.ts";
import type { InferContext } from "./infer-call.ts";
import { requestBody } from "./read-body.ts";
import type { ServeEnv } from "./direct-body.ts";

/** What the KServe routes need from the runtime. */
export interface KserveContext extends InferContext {
  server: { name: string; version: string; extensions: string[] };
  /** True once a shutdown began: readiness answers 503 so load balancers stop sending. */
  draining?: () => boolean;
}

const MODEL = "/v2/models/:name";
const VERSION = "/v2/models/:name/versions/:version{[0-9]+}";

/** KServe v2 core routes plus Triton's model-configuration extension. */
export function registerKserveRoutes(app: Hono, ctx: KserveContext): void {
  app.get("/v2", (c) => c.json(ctx.server));
  app.get("/v2/health/live", () => toResponse(health(ctx, "live")));
  app.get("/v2/health/ready", () => toResponse(health(ctx, "ready")));

  // Triton's statistics extension. Registered before /v2/models/:name so "stats" is not a model.
  app.get("/v2/models/stats", (c) => c.json(statistics(ctx)));
  app.get(`${MODEL}/stats`, (c) => c.json(statistics(ctx, c.req.param("name"))));
  app.get(`${VERSION}/stats`, (c) => c.json(statistics(ctx, c.req.param("name"), c.req.param("version"))));

  for (const base of [MODEL, VERSION]) {
    app.get(base, async (c) => c.json(metadata(await deployment(c, ctx), ctx)));
    app.get(`${base}/ready`, (c) => {
      const name = c.req.param("name")!;
      const r = ctx.models.readiness(name, c.req.param("version"));
      if (!r.ready) return jsonError(503, `model '${name}' version ${r.version} is not ready: ${r.reason}`);
      return c.json({ name, version: String(r.version), ready: true });
    });
    app.get(`${base}/config`, async (c) => c.json(effectiveConfig(await deployment(c, ctx))));
    app.post(`${base}/infer`, async (c) => {
      // On Node the adapter hands over the socket's body (and a signal) directly: touching
      // `c.req.raw.signal` or its body would build the web-stream bridge this skips.
      const body = (c.env as ServeEnv | undefined)?.directBody ?? requestBody(c.req.raw);
      const reply = await inferCall(ctx, { name: c.req.param("name")!, version: c.req.param("version"), header: (h) => c.req.header(h), body });
      return toResponse(reply);
    });
  }
}

/** Server liveness or readiness (Kubernetes probes): the one definition the app and a fast lane answer. */
export function health(ctx: Pick<KserveContext, "models" | "draining">, which: "live" | "ready"): Reply {
  if (which === "live") return jsonReply(200, { live: true });
  if (ctx.draining?.()) return jsonReply(503, { error: "Server not ready: shutting down" });
  if (!ctx.models.allReady()) return jsonReply(503, { error: "Server not ready: not every model is ready; see POST /v2/repository/index" });
  return jsonReply(200, { ready: true });
}

/** Triton's statistics, plus our state and instance count per version (extra keys clients ignore). */
function statistics(ctx: KserveContext, name?: string, version?: string) {
  return {
    model_stats: ctx.models.statistics(name, version).map((e) => ({ ...e.stats.toJSON(e.name, e.version), state: e.state, instance_count: e.instances })),
  };
}

/** The deployment a request names, loaded on demand (lazy mode, or a parked function). */
function deployment(c: Context, ctx: KserveContext, signal = c.req.raw.signal): Promise<Deployment> {
  return ctx.models.acquire(c.req.param("name")!, c.req.param("version"), { signal });
}

function metadata(d: Deployment, ctx: KserveContext) {
  const { config } = d;
  const batch = config.max_batch_size > 0 ? [-1] : [];
  const tensor = (t: TensorConfig) => ({
    name: t.name,
    datatype: fromConfigType(t.data_type),
    shape: [...batch, ...t.dims],
  });
  return {
    name: d.name,
    versions: ctx.models.versions(d.name),
    platform: config.platform || config.backend,
    inputs: config.input.map(tensor),
    outputs: config.output.map(tensor),
    parameters: {
      state: "READY",
      instance_count: d.instanceCount,
      execution_provider: d.provider,
      // `auto`'s choice (main = on the event loop), when the backend places sessions.
      ...(config.parameters.execution_thread && { execution_thread: config.parameters.execution_thread.string_value }),
    },
  };
}

/** Triton's JSON form, with the execution provider actually in use among the parameters. */
function effectiveConfig(d: Deployment) {
  const json = toTritonJson(d.config) as { parameters: Record<string, { string_value: string }> };
  json.parameters = { ...json.parameters, execution_provider: { string_value: d.provider } };
  if (d.fallbackReason) json.parameters.execution_provider_fallback = { string_value: d.fallbackReason };
  return json;
}
