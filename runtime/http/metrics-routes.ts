import type { Prometheus } from "../metrics/mod.ts";
import type { RouteHandlers } from "./routes.ts";
import { ROUTES } from "./routes.ts";

/** The Prometheus exposition (also served alone on `--metrics-port`). */
export function metricsHandlers(prometheus: Prometheus) {
  return {
    metrics: async () => ({ status: 200, headers: { "content-type": prometheus.contentType }, body: await prometheus.renderBytesAsync() }),
  } satisfies Partial<RouteHandlers>;
}

const METRICS_PATH = ROUTES.find((r) => r.id === "metrics")!.paths[0];

/** A fetch handler that serves only the metrics route, for a separate metrics port as Triton has (8002). */
export function metricsOnly(prometheus: Prometheus): (request: Request) => Promise<Response> {
  return async (request) => {
    if (new URL(request.url).pathname !== METRICS_PATH) return Response.json({ error: "Not Found" }, { status: 404 });
    return new Response((await prometheus.renderBytesAsync()) as BodyInit, { headers: { "content-type": prometheus.contentType } });
  };
}
