// What one Prometheus scrape costs the event loop (issue 11, target 7): `render()` of a checkout's
// runtime/metrics/prometheus.ts over `versions` versions with the same deterministic statistics
// (every family filled, latency histograms on), p50 of 2000 renders after 200 unmeasured. A scrape
// runs on the main thread between requests, so a readiness probe that arrives meanwhile waits it out.
//   npx tsx bench/studies/scrape-render.ts [versions=16] [checkout=.]
// For an A/B, pass a git worktree of another commit (it needs its own dependencies installed).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [versions = "16", root = "."] = process.argv.slice(2);
const at = (path: string) => pathToFileURL(resolve(root, path)).href;
const { createPrometheus } = await import(at("runtime/metrics/prometheus.ts"));
const { ModelStats } = await import(at("runtime/metrics/model-stats.ts"));

const entries = Array.from({ length: Number(versions) }, (_, k) => {
  const stats = new ModelStats();
  stats.loaded(12.5 + k, "disk");
  stats.transition("park", "idle");
  for (let i = 0; i < 40; i++) {
    stats.dequeued(0.1 * i);
    stats.executed({ reason: i % 3 ? "delay" : "full", rows: 1 + (i % 9), requests: 1 + (i % 9), inputMs: 0.01, inferMs: 0.2 * i, outputMs: 0.02, waitMs: i % 2 ? 0.05 : 0 });
    stats.succeeded(0.3 * i);
  }
  stats.failed(1, "REJECTED");
  stats.rateLimited();
  stats.cacheHit(0.01);
  stats.cacheMiss(0.2);
  stats.handlerCall("execute", 2, "ok");
  return { name: `model_${k}`, version: "1", state: "READY", instances: 1, targetInstances: 1, pending: 0, stats, memory: { host: 1000 * k, device: 0 }, cacheEnabled: k === 0 };
});
const prometheus = createPrometheus({ entries: () => entries, budgets: { host: 1 << 30 }, cache: () => ({ entries: 3, bytes: 4096, capacity: 1 << 20, evictions: 1 }) }, { histogramLatencies: true });
for (let i = 0; i < 200; i++) await prometheus.render();
const times: number[] = [];
for (let i = 0; i < 2000; i++) {
  const started = performance.now();
  await prometheus.render();
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
const text: string = await prometheus.render();
console.log(`${root}: ${versions} versions, ${text.split("\n").length} lines, ${(text.length / 1024).toFixed(0)} kB: render p50 ${(times[1000]! * 1000).toFixed(0)} µs, p90 ${(times[1800]! * 1000).toFixed(0)} µs`);
