// `npx tsx bench/studies/scrape-10k.ts [versions]`: one /metrics render for N loaded versions (copies
// of `simple`'s statistics after some traffic), and for N never loaded: the cost a scrape puts on
// the event loop. Cited by docs/guides/observability.md ("Many functions per pod").
import { createPrometheus } from "../../runtime/metrics/prometheus.ts";
import type { MetricsEntry } from "../../runtime/metrics/prometheus.ts";
import { ModelStats } from "../../runtime/metrics/model-stats.ts";

const n = Number(process.argv[2] ?? 10_000);
function entries(loaded: boolean): MetricsEntry[] {
  return Array.from({ length: n }, (_, i) => {
    const stats = new ModelStats();
    if (loaded) {
      stats.loaded(20, "disk");
      for (let k = 0; k < 5; k++) {
        stats.dequeued(0.1);
        stats.executed({ reason: "idle", rows: 1 + (k % 3), requests: 1, inputMs: 0.01, inferMs: 0.05, outputMs: 0.01, waitMs: 0 } as never);
        stats.succeeded(0.2);
      }
    }
    return { name: `simple_${i}`, version: "1", state: loaded ? "READY" : "UNAVAILABLE", instances: loaded ? 1 : 0, targetInstances: loaded ? 1 : 0, pending: 0, stats, memory: { host: loaded ? 1024 : 0, device: 0 }, loaded, cold: !loaded };
  });
}
for (const loaded of [true, false]) {
  const list = entries(loaded);
  const prometheus = createPrometheus({ entries: () => list, budgets: {} }, { histogramLatencies: process.env.HISTOGRAMS === "1" });
  for (let round = 0; round < 6; round++) {
    const started = performance.now();
    // What a scrape sends: the exposition as UTF-8 bytes.
    const bytes = prometheus.renderBytes();
    console.log(`${loaded ? "loaded" : "never loaded"} ×${n}, scrape ${round + 1}: ${(performance.now() - started).toFixed(0)} ms, ${(bytes.length / 1e6).toFixed(1)} MB`);
  }
}
