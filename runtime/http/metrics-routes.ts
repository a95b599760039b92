import type { Hono } from "hono";
import type { Prometheus } from "../metrics/mod.ts";

/** `GET /metrics`: the Prometheus exposition (also served alone on `--metrics-port`). */
export function registerMetricsRoutes(app: Hono, prometheus: Prometheus): void {
  app.get("/metrics", () => new Response(prometheus.render(), { headers: { "content-type": prometheus.contentType } }));
}

/** A fetch handler that serves only /metrics, for a separate metrics port as Triton has (8002). */
export function metricsOnly(prometheus: Prometheus): (request: Request) => Promise<Response> {
  return async (request) => {
    if (new URL(request.url).pathname !== "/metrics") return Response.json({ error: "Not Found" }, { status: 404 });
    return new Response(prometheus.render(), { headers: { "content-type": prometheus.contentType } });
  };
}
