import { Hono } from "hono";
import { cors } from "hono/cors";
import { accessControl } from "./access.ts";
import type { AccessOptions } from "./access.ts";
import { compressResponses } from "./compression.ts";
import { errorResponse, jsonError } from "./error-status.ts";
import { registerKserveRoutes } from "./kserve-routes.ts";
import { registerRepositoryRoutes } from "./repository-routes.ts";
import { registerFunctionRoutes } from "./function-routes.ts";
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
  /** Keys and trusted origins (absent: no keys, control routes loopback-only). */
  access?: AccessOptions;
  /** `--cors-origin`: origins (or "*") that may call the API from a browser; absent or empty: no CORS headers. */
  corsOrigins?: readonly string[];
}

/** The whole HTTP server as one fetch handler; adapters only translate sockets to it. */
export function createApp(ctx: AppContext): Hono {
  const app = new Hono();
  app.use(compressResponses());
  // CORS before access control: a preflight carries no key and must still be answered.
  if (ctx.corsOrigins?.length) app.use(corsPolicy(ctx.corsOrigins));
  app.use(accessControl({ ...ctx.access, trustedOrigins: ctx.corsOrigins }));
  registerKserveRoutes(app, ctx);
  registerRepositoryRoutes(app, ctx);
  registerFunctionRoutes(app, ctx);
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
  app.onError((error) => errorResponse(error, ctx.log.error, (text) => ctx.models.redact(text)));
  return app;
}

/** What a browser on an allowed origin may send and read: the binary extension's headers included. */
function corsPolicy(origins: readonly string[]) {
  return cors({
    origin: origins.includes("*") ? "*" : [...origins],
    allowMethods: ["GET", "POST", "OPTIONS"],
    allowHeaders: ["Authorization", "Content-Type", "Content-Encoding", "Inference-Header-Content-Length"],
    exposeHeaders: ["Inference-Header-Content-Length", "Retry-After", "WWW-Authenticate"],
    maxAge: 600,
  });
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
