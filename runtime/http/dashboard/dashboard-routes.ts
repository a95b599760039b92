import { jsonReply } from "../../call/mod.ts";
import type { Reply } from "../../call/mod.ts";
import { RuntimeError } from "../../core/mod.ts";
import type { Clock } from "../../core/mod.ts";
import type { MetricsEntry, TraceEvent } from "../../metrics/mod.ts";
import { DASHBOARD_CSS, DASHBOARD_HTML } from "./dashboard-page.ts";
import { DASHBOARD_SCRIPT } from "./dashboard-script.ts";
import { SnapshotBuilder } from "./dashboard-snapshot.ts";
import { SnapshotBroadcaster } from "./snapshot-broadcaster.ts";
import type { RouteHandlers, RouteRequest } from "../routes.ts";

/** Event streams open at once; each further one is refused with 503 until one closes. */
export const DEFAULT_MAX_DASHBOARD_STREAMS = 32;

export interface DashboardContext {
  entries: () => MetricsEntry[];
  trace: (seconds: number) => { traceEvents: TraceEvent[] };
  now: () => number;
  /** Drives the streams' one shared timer (the runtime's clock; tests pass a fake one). */
  clock?: Pick<Clock, "setTimeout" | "clearTimeout">;
  /** How often the live page gets a new snapshot. */
  intervalMs?: number;
  maxStreams?: number;
}

/**
 * Nothing but the page's own files may run or load: a name that slipped past every other check
 * still cannot become script. `frame-ancestors 'none'` keeps other sites from framing the buttons.
 */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

/**
 * The dev dashboard: the page, its script and style, an event stream shared by every watcher (SSE)
 * and a JSON snapshot (routes.ts holds their paths).
 */
export function dashboardHandlers(ctx: DashboardContext) {
  const page = (body: string, type: string) => (): Reply => ({ status: 200, headers: { ...PAGE_HEADERS, "content-type": `${type}; charset=utf-8` }, body });
  const maxStreams = ctx.maxStreams ?? DEFAULT_MAX_DASHBOARD_STREAMS;
  // One builder for all watchers: its rates are differences between the shared ticks.
  const builder = new SnapshotBuilder(ctx.entries, ctx.trace);
  const broadcaster = new SnapshotBroadcaster(() => builder.next(ctx.now()), {
    clock: ctx.clock ?? { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) },
    intervalMs: ctx.intervalMs ?? 1000,
    maxStreams,
  });
  return {
    "dashboard-page": page(DASHBOARD_HTML, "text/html"),
    "dashboard-script": page(DASHBOARD_SCRIPT, "text/javascript"),
    "dashboard-style": page(DASHBOARD_CSS, "text/css"),
    "dashboard-snapshot": () => jsonReply(200, new SnapshotBuilder(ctx.entries, ctx.trace).next(ctx.now())),
    "dashboard-events": (r: RouteRequest) => {
      const stream = broadcaster.open(r.body.signal);
      if (!stream) throw new RuntimeError("UNAVAILABLE", `too many dashboard event streams open (the limit is ${maxStreams}); close a dashboard tab and retry`, { retryAfterMs: 5000 });
      return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } });
    },
  } satisfies Partial<RouteHandlers>;
}
