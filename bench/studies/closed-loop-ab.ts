// Batched functions in a closed loop, one checkout against another, interleaved: keep-alive clients
// (undici Pool, one request in flight per connection, as `npm run bench` drives them) against
// `functions/mlp` as bundled (max_queue_delay 500 µs) and `mlp_adaptive` (target_latency_ms 20) of
// the bench repository. Reports req/s, p50 and, from the server's statistics, the average batch and
// the queue time per request: what a batcher that waits for requests that cannot arrive adds; and,
// where the checkout counts it, the share of batches that left because no request could arrive.
// Each checkout needs its node_modules (a link to this one's will do); the functions and their model
// files come from this checkout's functions/ (`npm ci` builds them).
// Usage: tsx bench/studies/closed-loop-ab.ts <checkout>,<checkout> [rounds=3] [points=mlp:1:json,...]
import { resolve } from "node:path";
import { writeBenchRepository } from "../suites/scenarios/bench-repository.ts";
import { benchFunctions } from "../suites/scenarios/served.ts";
import { benchRequest, measureStep } from "../suites/scenarios/measure-step.ts";
import { spawnServer } from "../../harness/server-process.ts";

const roots = (process.argv[2] ?? ".").split(",").map((root) => resolve(root));
const rounds = Number(process.argv[3] ?? 3);
const points = (process.argv[4] ?? "mlp:1:json,mlp:8:json,mlp:8:binary,mlp:32:binary,mlp_adaptive:8:binary,mlp_adaptive:32:binary").split(",").map((p) => {
  const [model, c, encoding] = p.split(":");
  return { model: model!, concurrency: Number(c), encoding: encoding as "json" | "binary" };
});
const repo = writeBenchRepository(resolve("functions"), benchFunctions().filter((f) => points.some((p) => p.model === f.name)));
const servers = [];
for (const root of roots) servers.push({ root, ...(await spawnServer("node", [`${root}/adapters/node/bin.mjs`, "serve", "--repo", repo, "--model-control-mode", "none", "--port", "0"])) });
/** Executions by dispatch reason so far (`tensorfn_batch_dispatches_total`; none before stop 27's checkouts). */
async function dispatches(url: string, model: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^tensorfn_batch_dispatches_total\{model="([^"]+)",version="[^"]+",reason="([^"]+)"\} (\d+)$/gm)) if (m[1] === model) counts.set(m[2]!, Number(m[3]));
  return counts;
}
const share = (before: Map<string, number>, after: Map<string, number>, reason: string) => {
  let all = 0;
  for (const [r, n] of after) all += n - (before.get(r) ?? 0);
  return all > 0 ? ((after.get(reason) ?? 0) - (before.get(reason) ?? 0)) / all : NaN;
};
const pct = (x: number) => (Number.isNaN(x) ? "n/a" : `${(100 * x).toFixed(0)} % of batches`);
const rows = new Map<string, number[][]>();
for (let round = 0; round < rounds; round++) {
  for (const point of points) {
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      const request = await benchRequest(s.url, point.model, { encoding: point.encoding });
      const before = await dispatches(s.url, point.model);
      const m = await measureStep({ target: s.root, url: s.url, model: point.model, pid: s.pid, stats: true, concurrency: point.concurrency, warmupMs: 500, durationMs: 2000, encoding: point.encoding }, request);
      const key = `${point.model} c=${point.concurrency} ${point.encoding} | ${s.root}`;
      const noArrivals = share(before, await dispatches(s.url, point.model), "no_arrivals");
      const row = [m.inferPerS, m.latencyMs?.p50 ?? NaN, m.server?.avgBatchSize ?? NaN, m.server?.queueUsPerRequest ?? NaN, noArrivals];
      rows.set(key, [...(rows.get(key) ?? []), row]);
      console.log(`round ${round + 1} ${key}: ${row[0]!.toFixed(0)} req/s, p50 ${row[1]!.toFixed(3)} ms, batch ${row[2]!.toFixed(1)}, queue ${row[3]!.toFixed(0)} µs/request, no_arrivals ${pct(row[4]!)}`);
    }
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(`medians of ${rounds} rounds:`);
for (const [key, r] of rows) console.log(`${key}: ${median(r.map((x) => x[0]!)).toFixed(0)} req/s, p50 ${median(r.map((x) => x[1]!)).toFixed(3)} ms, batch ${median(r.map((x) => x[2]!)).toFixed(1)}, queue ${median(r.map((x) => x[3]!)).toFixed(0)} µs/request, no_arrivals ${pct(median(r.map((x) => x[4]!)))}`);
for (const s of servers) await s.stop();
