// The cost of /metrics with many functions. Cited by docs/reference/metrics.md.
//   npx tsx bench/studies/scrape-10k.ts [versions=10000]           the render alone, on fake statistics
//   npx tsx bench/studies/scrape-10k.ts [versions=10000] --served  through the CLI: N copies of `simple`
//     in lazy mode (start, RSS, scrapes), then a first call to each (8 clients) and scrapes once idle
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPrometheus } from "../../runtime/metrics/prometheus.ts";
import type { MetricsEntry } from "../../runtime/metrics/prometheus.ts";
import { ModelStats } from "../../runtime/metrics/model-stats.ts";
import { get } from "node:http";
import { spawnServer } from "../../harness/server-process.ts";
import { FUNCTIONS } from "../../harness/repositories.ts";

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
    return { name: `simple_${i}`, version: "1", state: loaded ? "READY" : "UNAVAILABLE", instances: loaded ? 1 : 0, targetInstances: loaded ? 1 : 0, pending: 0, stats, memory: { host: loaded ? 1024 : 0, device: 0 } };
  });
}

async function rendered(): Promise<void> {
  for (const loaded of [true, false]) {
    const list = entries(loaded);
    const prometheus = createPrometheus({ entries: () => list, budgets: {} }, { histogramLatencies: process.env.HISTOGRAMS === "1" });
    for (let round = 0; round < 6; round++) {
      const started = performance.now();
      const bytes = prometheus.renderBytes(); // what a scrape sends
      console.log(`${loaded ? "loaded" : "never loaded"} ×${n}, scrape ${round + 1}: ${(performance.now() - started).toFixed(0)} ms, ${(bytes.length / 1e6).toFixed(1)} MB`);
    }
  }
}

async function served(): Promise<void> {
  const repo = mkdtempSync(join(tmpdir(), "tensorfn-many-"));
  for (let i = 0; i < n; i++) {
    mkdirSync(join(repo, `s${i}`, "1"), { recursive: true });
    cpSync(join(FUNCTIONS, "simple", "1", "model.onnx"), join(repo, `s${i}`, "1", "model.onnx"));
  }
  const started = performance.now();
  const server = await spawnServer(process.execPath, ["adapters/node/bin.mjs", "serve", "--repo", repo, "--port", "0"], { timeoutMs: 300_000 });
  const rss = () => `${(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))![1]) / 1024).toFixed(0)} MB`;
  const scrapes = async (what: string) => {
    for (let round = 0; round < 6; round++) {
      const t = performance.now();
      // node:http, not fetch: the client shares the cores, and fetch's own cost would count as the scrape's.
      const bytes = await new Promise<number>((resolve, reject) =>
        get(`${server.url}/metrics`, (res) => {
          let length = 0;
          res.on("data", (chunk: Buffer) => (length += chunk.length));
          res.on("end", () => resolve(length));
        }).on("error", reject),
      );
      console.log(`${what}, scrape ${round + 1}: ${(performance.now() - t).toFixed(0)} ms, ${(bytes / 1e6).toFixed(2)} MB`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  try {
    console.log(`${n} functions, lazy: URL after ${((performance.now() - started) / 1000).toFixed(1)} s, RSS ${rss()}`);
    await scrapes("none loaded");
    const body = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) });
    let next = 0;
    const t = performance.now();
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < n) {
        const r = await fetch(`${server.url}/v2/models/s${next++}/infer`, { method: "POST", body });
        if (r.status !== 200) throw new Error(`first call: ${r.status}`);
        await r.arrayBuffer();
      }
    }));
    console.log(`${n} first calls in ${((performance.now() - t) / 1000).toFixed(1)} s, RSS ${rss()}`);
    await scrapes("all loaded");
  } finally {
    await server.stop();
    rmSync(repo, { recursive: true, force: true });
  }
}

await (process.argv.includes("--served") ? served() : rendered());
