import { request } from "undici";
import { summarizeLatencies } from "../../../adapters/bench/percentiles.ts";
import type { Percentiles } from "../../../adapters/bench/percentiles.ts";

/** Latencies of the control-plane probes sent while a step loads the server (issue 11, target 7). */
export interface ProbeResults {
  /** `GET /v2/health/ready`, one after another with `READY_GAP_MS` between them. */
  ready: Percentiles | null;
  readyCount: number;
  /** `GET /metrics` (a Prometheus scrape, read to the end), one every `SCRAPE_EVERY_MS`. */
  metrics: Percentiles | null;
  metricsCount: number;
  /** Probes that did not answer 200, and the first reason. */
  errors: number;
  firstError: string | null;
}

/** A running probe loop; `stop()` ends it and gives what it measured. */
export interface Prober {
  stop(): Promise<ProbeResults>;
}

const READY_GAP_MS = 10;
const SCRAPE_EVERY_MS = 200;

/**
 * Starts probing `baseUrl` as an orchestrator and a Prometheus server would while the load runs:
 * readiness every 10 ms, a scrape every 200 ms, each on its own loop so a slow scrape does not
 * delay the readiness probes. Both use undici's global keep-alive agent, apart from the load's pool.
 */
export function startProbes(baseUrl: string): Prober {
  const ready: number[] = [];
  const metrics: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  let stopping = false;
  const probe = async (path: string, into: number[], gapMs: number) => {
    while (!stopping) {
      const started = performance.now();
      try {
        const response = await request(`${baseUrl}${path}`);
        await response.body.arrayBuffer();
        if (response.statusCode === 200) into.push(performance.now() - started);
        else {
          errors++;
          firstError ??= `${path}: HTTP ${response.statusCode}`;
        }
      } catch (error) {
        errors++;
        firstError ??= `${path}: ${error instanceof Error ? error.message : String(error)}`;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, gapMs - (path === "/metrics" ? performance.now() - started : 0))));
    }
  };
  const loops = [probe("/v2/health/ready", ready, READY_GAP_MS), probe("/metrics", metrics, SCRAPE_EVERY_MS)];
  return {
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      return { ready: summarizeLatencies(ready) ?? null, readyCount: ready.length, metrics: summarizeLatencies(metrics) ?? null, metricsCount: metrics.length, errors, firstError };
    },
  };
}
