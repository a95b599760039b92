import { jsonReply } from "../call/mod.ts";
import { invalidArg } from "../core/mod.ts";
import type { Prometheus, TraceEvent } from "../metrics/mod.ts";
import type { AccessOptions } from "../call/mod.ts";
import { dashboardHandlers } from "./dashboard/dashboard-routes.ts";
import type { DashboardContext } from "./dashboard/dashboard-routes.ts";
import type { ErrorLog } from "../call/mod.ts";
import { functionHandlers } from "./function-routes.ts";
import { generateHandlers } from "./generate-routes.ts";
import { openAiHandlers } from "./openai-routes.ts";
import { kserveHandlers } from "./kserve-routes.ts";
import type { KserveContext } from "./kserve-routes.ts";
import { metricsHandlers } from "./metrics-routes.ts";
import { repositoryHandlers } from "./repository-routes.ts";
import { sharedMemoryHandlers } from "./shared-memory-routes.ts";
import type { RouteHandlers, RouteRequest } from "./routes.ts";

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
