import { Hono } from "hono";
import { compressResponses } from "./compression.ts";
import { errorResponse, jsonError } from "./error-status.ts";
import { registerKserveRoutes } from "./kserve-routes.ts";
import { registerRepositoryRoutes } from "./repository-routes.ts";
import { registerMetricsRoutes } from "./metrics-routes.ts";
import type { Prometheus, TraceEvent } from "../metrics/mod.ts";
import { registerDashboardRoutes } from "./dashboard/dashboard-routes.ts";
import type { DashboardContext } from "./dashboard/dashboard-routes.ts";
import type { KserveContext } from "./kserve-routes.ts";

export interface AppContext extends KserveContext {
  prometheus: Prometheus;
  /** The timeline of the last `seconds` (Chrome trace JSON). */
  trace: (seconds: number) => { traceEvents: TraceEvent[] };
  /** The dev dashboard (GET /, live over SSE); absent in `serve`. */
  dashboard?: DashboardContext;
  log: { error(message: string): void };
}

/** The whole HTTP server as one fetch handler; adapters only translate sockets to it. */
export function createApp(ctx: AppContext): Hono {
  const app = new Hono();
  app.use(compressResponses());
  registerKserveRoutes(app, ctx);
  registerRepositoryRoutes(app, ctx);
  registerMetricsRoutes(app, ctx.prometheus);
  if (ctx.dashboard) registerDashboardRoutes(app, ctx.dashboard);
  // The trace timeline: Chrome Trace Event JSON for Perfetto or chrome://tracing.
  app.get("/v2/trace", (c) => {
    const seconds = Number(c.req.query("seconds") ?? 10);
    if (!Number.isFinite(seconds) || seconds <= 0) return jsonError(400, `query parameter 'seconds' must be a positive number, got '${c.req.query("seconds")}'`);
    return c.json(ctx.trace(seconds));
  });
  // Known paths with the wrong method answer 405, as Triton does; anything else 404.
  app.all("/v2/*", (c) => (knownPath(c.req.path) ? jsonError(405, "Method Not Allowed") : jsonError(404, "Not Found")));
  app.notFound(() => jsonError(404, "Not Found"));
  app.onError((error) => errorResponse(error, ctx.log.error));
  return app;
}

const known = [
  /^\/v2$/,
  /^\/v2\/trace$/,
  /^\/v2\/health\/(live|ready)$/,
  /^\/v2\/repository\/(index|models\/[^/]+\/(load|unload|park))$/,
  /^\/v2\/models\/[^/]+(\/versions\/[0-9]+)?(\/(ready|config|infer|stats))?$/,
];

function knownPath(path: string): boolean {
  return known.some((re) => re.test(path));
}
