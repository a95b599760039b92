import type { Prometheus } from "../metrics/mod.ts";
import type { RouteHandlers } from "./routes.ts";

/** The Prometheus exposition (also served alone on `--metrics-port`). */
export function metricsHandlers(prometheus: Prometheus) {
  return {
    metrics: async () => ({ status: 200, headers: { "content-type": prometheus.contentType }, body: await prometheus.renderBytesAsync() }),
  } satisfies Partial<RouteHandlers>;
}
