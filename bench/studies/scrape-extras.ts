// What a scrape costs with the families others write (issue 40): tensorfn's own exposition of
// `versions` versions (scrape-render.ts's statistics), then with prom-client's process metrics,
// with four GPUs' families (a fake NVML sample: 2 GPUs, 2 MIG devices), with a handler's custom
// histogram; and tensorfn's own families written by prom-client's Registry instead (each sample
// a labelled gauge set in collect(), as an exporter built on prom-client would). p50/p90 of 1000
// asynchronous renders after 100 unmeasured.
//   npx tsx bench/studies/scrape-extras.ts [versions=16]
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { createPrometheus, CustomMetrics, ModelStats } from "../../runtime/metrics/mod.ts";
import type { GpuSample } from "../../runtime/metrics/mod.ts";

const versions = Number(process.argv[2] ?? "16");
const entries = Array.from({ length: versions }, (_, k) => {
  const stats = new ModelStats();
  stats.loaded(12.5 + k, "disk");
  for (let i = 0; i < 40; i++) {
    stats.dequeued(0.1 * i);
    stats.executed({ reason: i % 3 ? "delay" : "full", rows: 1 + (i % 9), requests: 1 + (i % 9), inputMs: 0.01, inferMs: 0.2 * i, outputMs: 0.02, waitMs: i % 2 ? 0.05 : 0, startMs: i, instance: 0 });
    stats.succeeded(0.3 * i);
  }
  return { name: `model_${k}`, version: "1", state: "READY", instances: 1, targetInstances: 1, pending: 0, stats, memory: { host: 1000 * k, device: 0 } };
});
const gpus: GpuSample[] = [
  { uuid: "GPU-1", name: "H100", utilization: 0.42, memoryTotalBytes: 8e10, memoryUsedBytes: 2e10, powerWatts: 250, powerLimitWatts: 700, energyJoules: 1000, temperatureCelsius: 55 },
  { uuid: "GPU-2", name: "A100", memoryTotalBytes: 4e10, memoryUsedBytes: 6e9, powerWatts: 90, powerLimitWatts: 400, energyJoules: 500, temperatureCelsius: 40 },
  { uuid: "MIG-1", name: "A100 MIG", parent: "GPU-2", memoryTotalBytes: 2e10, memoryUsedBytes: 1e9 },
  { uuid: "MIG-3", name: "A100 MIG", parent: "GPU-2", memoryTotalBytes: 2e10, memoryUsedBytes: 5e9 },
];
const process_ = new Registry();
collectDefaultMetrics({ register: process_ });
const custom = new CustomMetrics();
const h = custom.forFunction("word_count").histogram({ name: "word_count_words", help: "Words", buckets: [1, 10, 100, 1000] });
for (let i = 0; i < 100; i++) h.observe(i);

const base = { entries: () => entries, budgets: { host: 1 << 30 } };
const own = createPrometheus(base, { histogramLatencies: true });
// tensorfn's own families through prom-client: the same samples, one labelled gauge per family.
const viaRegistry = new Registry();
const ownText = own.render();
const families = new Map<string, { help: string; samples: [Record<string, string>, number][] }>();
for (const line of ownText.split("\n")) {
  const help = /^# HELP (\S+) (.*)$/.exec(line);
  if (help) families.set(help[1]!, { help: help[2]!, samples: [] });
  const sample = /^([a-zA-Z_:][\w:]*?)(?:_bucket|_sum|_count)?(?:\{(.*)\})? (\S+)$/.exec(line);
  if (!sample || line.startsWith("#")) continue;
  const name = line.split(/[{ ]/)[0]!;
  const labels = Object.fromEntries([...(sample[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
  const family = families.get(name) ?? families.get(sample[1]!)!;
  if (!families.has(name)) families.set(name, { help: family.help, samples: [] });
  families.get(name)!.samples.push([labels, Number(sample[3])]);
}
for (const [name, f] of families) {
  if (f.samples.length === 0) continue;
  const labelNames = [...new Set(f.samples.flatMap(([l]) => Object.keys(l)))];
  new Gauge({ name, help: f.help, labelNames, registers: [viaRegistry], collect() { for (const [l, v] of f.samples) this.set(l, v); } });
}

const cases: [string, () => Promise<unknown>][] = [
  ["tensorfn's families (its own writer)", () => own.renderBytesAsync()],
  ["the same through prom-client's Registry", () => viaRegistry.metrics()],
  ["+ process metrics (prom-client)", () => createCached("process").renderBytesAsync()],
  ["+ 4 GPU devices' families", () => createCached("gpus").renderBytesAsync()],
  ["+ process + GPUs + a custom histogram", () => createCached("all").renderBytesAsync()],
];
const made = new Map<string, ReturnType<typeof createPrometheus>>();
function createCached(which: "process" | "gpus" | "all") {
  if (!made.has(which)) {
    made.set(which, createPrometheus({
      ...base,
      ...(which !== "gpus" && { extra: which === "all" ? [() => custom.render(), () => process_.metrics()] : [() => process_.metrics()] }),
      ...(which !== "process" && { gpus: () => gpus }),
    }, { histogramLatencies: true }));
  }
  return made.get(which)!;
}
for (const [label, run] of cases) {
  for (let i = 0; i < 100; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`${versions} versions, ${label}: p50 ${(times[500]! * 1000).toFixed(0)} µs, p90 ${(times[900]! * 1000).toFixed(0)} µs`);
}
