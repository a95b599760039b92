import type { Registry } from "prom-client";

/**
 * `Platform.processMetrics` through prom-client's default metrics (`process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, `process_open_fds`, `nodejs_eventloop_lag_seconds`, the heap…),
 * which Node, Bun and Deno all serve. Started on the first scrape, so a platform that is never
 * scraped (a test's, a CLI command's) runs no event-loop monitor.
 */
export function processMetrics(): () => Promise<string> {
  let registry: Promise<Registry> | undefined;
  return async () => {
    // prom-client itself too: loaded by the first scrape, not by every start.
    registry ??= import("prom-client").then(({ collectDefaultMetrics, Registry }) => {
      const r = new Registry();
      collectDefaultMetrics({ register: r });
      return r;
    });
    return (await registry).metrics();
  };
}
