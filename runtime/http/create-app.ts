import { Hono } from "hono";
import type { Context } from "hono";
import { cors } from "hono/cors";
import { jsonReply, requestBody } from "../call/mod.ts";
import type { DirectBody, ServeEnv } from "../call/mod.ts";
import { invalidArg } from "../core/mod.ts";
import type { Prometheus, TraceEvent } from "../metrics/mod.ts";
import { accessControl } from "./access.ts";
import type { AccessOptions } from "../call/mod.ts";
import { COMPRESSED, compressReply } from "./compression.ts";
import { dashboardHandlers } from "./dashboard/dashboard-routes.ts";
import type { DashboardContext } from "./dashboard/dashboard-routes.ts";
import { errorResponse, jsonError, openAiErrorReply, toResponse } from "./error-status.ts";
import type { ErrorLog } from "../call/mod.ts";
import { functionHandlers } from "./function-routes.ts";
import { generateHandlers } from "./generate-routes.ts";
import { openAiHandlers } from "./openai-routes.ts";
import { kserveHandlers } from "./kserve-routes.ts";
import type { KserveContext } from "./kserve-routes.ts";
import { metricsHandlers } from "./metrics-routes.ts";
import { repositoryHandlers } from "./repository-routes.ts";
import { ROUTES, routerPattern } from "./routes.ts";
import { sharedMemoryHandlers } from "./shared-memory-routes.ts";
import type { RouteHandler, RouteHandlers, RouteId, RouteRequest } from "./routes.ts";

export interface AppContext extends KserveContext {
  prometheus: Prometheus;
  /** The timeline of the last `seconds` (Chrome trace JSON). */
  trace: (seconds: number) => { traceEvents: TraceEvent[] };
  /** The dev dashboard (GET /, live over SSE); absent in `serve`. */
  dashboard?: DashboardContext;
  log: ErrorLog;
  /** Keys and trusted origins (absent: no keys, control routes loopback-only). */
  access?: AccessOptions;
  /** `--cors-origin`: origins (or "*") that may call the API from a browser; absent or empty: no CORS headers. */
  corsOrigins?: readonly string[];
}

/** Every route's handler, by the id routes.ts gives it; the dashboard's only where there is one. */
export function routeHandlers(ctx: AppContext): Partial<RouteHandlers> {
  return {
    ...kserveHandlers(ctx),
    ...generateHandlers(ctx),
    ...openAiHandlers(ctx),
    ...repositoryHandlers(ctx),
    ...sharedMemoryHandlers(ctx),
    ...functionHandlers(ctx),
    ...metricsHandlers(ctx.prometheus),
    // The trace timeline: Chrome Trace Event JSON for Perfetto or chrome://tracing.
    trace: (r: RouteRequest) => {
      const query = r.query("seconds");
      const seconds = Number(query ?? 10);
      if (!Number.isFinite(seconds) || seconds <= 0) throw invalidArg(`query parameter 'seconds' must be a positive number, got '${query}'`);
      return jsonReply(200, ctx.trace(seconds));
    },
    ...(ctx.dashboard && dashboardHandlers(ctx.dashboard)),
  } satisfies Omit<RouteHandlers, `dashboard-${string}`> & Partial<RouteHandlers>;
}

/** The whole HTTP server as one fetch handler; adapters only translate sockets to it. */
export function createApp(ctx: AppContext, handlers: Partial<RouteHandlers> = routeHandlers(ctx)): Hono {
  const app = new Hono();
  // CORS before access control: a preflight carries no key and must still be answered.
  if (ctx.corsOrigins?.length) app.use(corsPolicy(ctx.corsOrigins));
  app.use(accessControl({ ...ctx.access, trustedOrigins: ctx.corsOrigins }));
  mountRoutes(app, handlers);
  // OpenAI's routes answer every error in OpenAI's shape, a missing key's included (its clients raise their typed errors).
  const openAi = new Set<string>(ROUTES.flatMap((r) => ("errors" in r ? r.paths : [])));
  app.onError((error, c) =>
    openAi.has(c.req.path) ? toResponse(openAiErrorReply(error, ctx.log, (text) => ctx.models.redact(text))) : errorResponse(error, ctx.log, (text) => ctx.models.redact(text)),
  );
  return app;
}

/**
 * Registers the route table's rows that have a handler, in the table's order; a known path with
 * the wrong method answers 405, as Triton does, and anything else 404.
 */
export function mountRoutes(app: Hono, handlers: Partial<Record<RouteId, RouteHandler>>): void {
  const known: RegExp[] = [];
  for (const route of ROUTES) {
    const handle = handlers[route.id];
    if (!handle) continue;
    for (const path of route.paths) {
      known.push(routerPattern(path));
      const compressed = COMPRESSED.has(route.group);
      app.on(route.method, path, async (c) => {
        const reply = await handle(new HonoRequest(c));
        const encoding = compressed ? c.req.header("accept-encoding") : undefined;
        return toResponse(encoding === undefined ? reply : await compressReply(reply, encoding));
      });
    }
  }
  app.all("*", (c) => (known.some((re) => re.test(c.req.path)) ? jsonError(405, "Method Not Allowed") : jsonError(404, "Not Found")));
}

/**
 * A Hono request as a route sees it; the body is built only when a route asks for it: the
 * adapter's own where it hands one over (on Node: the socket's, and a signal, without the
 * web-stream bridge that touching `c.req.raw`'s body or signal builds), else the web Request's.
 */
class HonoRequest implements RouteRequest {
  readonly #c: Context;
  #body: DirectBody | undefined;

  constructor(c: Context) {
    this.#c = c;
  }

  get params(): Record<string, string | undefined> {
    return this.#c.req.param() as Record<string, string | undefined>;
  }

  readonly header = (name: string) => this.#c.req.header(name);

  query(name: string): string | undefined {
    return this.#c.req.query(name);
  }

  get body(): DirectBody {
    return (this.#body ??= (this.#c.env as ServeEnv | undefined)?.directBody ?? requestBody(this.#c.req.raw));
  }
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
