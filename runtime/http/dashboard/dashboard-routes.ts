import { jsonReply } from "../../call/mod.ts";
import type { Reply } from "../../call/mod.ts";
import { invalidArg, RuntimeError } from "../../core/mod.ts";
import type { Clock } from "../../core/mod.ts";
import { RateHistory } from "../../metrics/mod.ts";
import type { MetricsEntry, TraceEvent } from "../../metrics/mod.ts";
import { DASHBOARD_CSS, DASHBOARD_HTML } from "./dashboard-page.ts";
import { DASHBOARD_SCRIPT } from "./dashboard-script.ts";
import { SnapshotBuilder } from "./dashboard-snapshot.ts";
import type { FunctionStatus, Sample } from "./dashboard-snapshot.ts";
import { SnapshotBroadcaster } from "./snapshot-broadcaster.ts";
import type { RouteHandlers, RouteRequest } from "../routes.ts";

/** Event streams open at once; each further one is refused with 503 until one closes. */
export const DEFAULT_MAX_DASHBOARD_STREAMS = 32;

export interface DashboardContext {
  entries: () => MetricsEntry[];
  /** Every function and version with its state and reason (the repository index's rows), paths redacted. */
  statuses?: () => FunctionStatus[];
  trace: (seconds: number) => { traceEvents: TraceEvent[] };
  now: () => number;
  /** Drives the streams' one shared timer (the runtime's clock; tests pass a fake one). */
  clock?: Pick<Clock, "setTimeout" | "clearTimeout">;
  /** How often the live page gets a new snapshot. */
  intervalMs?: number;
  maxStreams?: number;
  /** Aborts at shutdown: the history's sampling timer stops. */
  stopped?: AbortSignal;
}

/** How much history the snapshot's rates may cover, and the window they cover unless asked otherwise. */
export const HISTORY_SECONDS = 300;
export const DEFAULT_WINDOW_SECONDS = 10;

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
  const builder = new SnapshotBuilder(ctx.entries, ctx.trace, ctx.statuses);
  const broadcaster = new SnapshotBroadcaster(() => builder.next(ctx.now()), {
    clock: ctx.clock ?? { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) },
    intervalMs: ctx.intervalMs ?? 1000,
    maxStreams,
  });
  // The last minutes, sampled each interval whether or not anyone watches: a snapshot asked for
  // at any moment reports rates over a recent window, not zeros.
  const history = new RateHistory<Sample>(HISTORY_SECONDS * 1000);
  const timers = ctx.clock ?? { setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>) };
  let timer: unknown;
  const sample = () => {
    builder.sampleInto(history, ctx.now());
    timer = timers.setTimeout(sample, ctx.intervalMs ?? 1000);
    (timer as { unref?(): void } | undefined)?.unref?.(); // never what keeps a process alive
  };
  if (!ctx.stopped?.aborted) sample();
  ctx.stopped?.addEventListener("abort", () => timers.clearTimeout(timer), { once: true });
  return {
    "dashboard-page": page(DASHBOARD_HTML, "text/html"),
    "dashboard-script": page(DASHBOARD_SCRIPT, "text/javascript"),
    "dashboard-style": page(DASHBOARD_CSS, "text/css"),
    "dashboard-snapshot": (r: RouteRequest) => {
      const asked = r.query("window");
      const seconds = asked === undefined ? DEFAULT_WINDOW_SECONDS : Number(asked);
      if (!Number.isFinite(seconds) || seconds <= 0 || seconds > HISTORY_SECONDS) {
        throw invalidArg(`query parameter 'window' must be a number of seconds in (0, ${HISTORY_SECONDS}], got '${asked}'`);
      }
      return jsonReply(200, builder.over(ctx.now(), seconds * 1000, history));
    },
    "dashboard-history": () => jsonReply(200, { seconds: HISTORY_SECONDS, functions: builder.series(ctx.now(), history) }),
    "dashboard-events": (r: RouteRequest) => {
      const stream = broadcaster.open(r.body.signal);
      if (!stream) throw new RuntimeError("UNAVAILABLE", `too many dashboard event streams open (the limit is ${maxStreams}); close a dashboard tab and retry`, { retryAfterMs: 5000 });
      return { status: 200, headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" }, body: stream };
    },
  } satisfies Partial<RouteHandlers>;
}
