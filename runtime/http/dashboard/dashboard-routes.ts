import type { Hono } from "hono";
import type { MetricsEntry, TraceEvent } from "../../metrics/mod.ts";
import { DASHBOARD_HTML } from "./dashboard-page.ts";
import { SnapshotBuilder } from "./dashboard-snapshot.ts";

export interface DashboardContext {
  entries: () => MetricsEntry[];
  trace: (seconds: number) => { traceEvents: TraceEvent[] };
  now: () => number;
  /** How often the live page gets a new snapshot. */
  intervalMs?: number;
}

/** The dev dashboard: `GET /` (the page), `/v2/dashboard/events` (SSE) and `/v2/dashboard/snapshot` (JSON). */
export function registerDashboardRoutes(app: Hono, ctx: DashboardContext): void {
  app.get("/", (c) => c.html(DASHBOARD_HTML));
  app.get("/v2/dashboard/snapshot", (c) => c.json(new SnapshotBuilder(ctx.entries, ctx.trace).next(ctx.now())));
  app.get("/v2/dashboard/events", (c) => {
    const builder = new SnapshotBuilder(ctx.entries, ctx.trace);
    const encoder = new TextEncoder();
    let timer: ReturnType<typeof setInterval> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const send = () => controller.enqueue(encoder.encode(`data: ${JSON.stringify(builder.next(ctx.now()))}\n\n`));
        send();
        timer = setInterval(send, ctx.intervalMs ?? 1000);
      },
      cancel() {
        clearInterval(timer);
      },
    });
    c.req.raw.signal.addEventListener("abort", () => clearInterval(timer));
    return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } });
  });
}
