// How long a fresh server takes to reach its steady speed (issue 11): req/s and server CPU per
// request in consecutive 1 s windows from the first request on, for the hand-written node:http
// server or tensorfn. The first seconds measure V8 compiling the server, which is why
// `npm run bench` warms every server up the same way before measuring (warmServers in
// bench/suites/scenarios/served.ts).
// Usage: tsx bench/studies/jit-warmup.ts [hand|tensorfn] [model=simple] [concurrency=1] [binary|json] [windows=12]
import { benchRequest, measureStep } from "../suites/scenarios/measure-step.ts";
import type { Encoding } from "../suites/scenarios/measure-step.ts";
import { spawnServer } from "../../harness/server-process.ts";

const [which = "tensorfn", model = "simple", concurrency = "1", encoding = "binary", windows = "12"] = process.argv.slice(2);
// tensorfn always runs: the hand-written server has no metadata routes, requests are built from tensorfn's.
const tensorfn = await spawnServer("node", ["adapters/node/bin.mjs", "serve", "--repo", "functions", "--model-control-mode", "none", "--port", "0"]);
const hand = which === "hand" ? await spawnServer("node", ["--import", "tsx", "bench/suites/handwritten-server.ts", "--repo", "functions", "--models", "simple,mlp", "--port", "0"]) : undefined;
const server = hand ?? tensorfn;
const request = await benchRequest(tensorfn.url, model, { encoding: encoding as Encoding });
const seen: string[] = [];
for (let i = 0; i < Number(windows); i++) {
  const m = await measureStep({ target: which, url: server.url, model, pid: server.pid, stats: false, concurrency: Number(concurrency), warmupMs: 0, durationMs: 1000, encoding: encoding as Encoding }, request);
  seen.push(`${m.inferPerS.toFixed(0)} (${(((m.cores.server ?? 0) * 1e6) / m.inferPerS).toFixed(0)} µs)`);
}
console.log(`${which} ${model} c=${concurrency} ${encoding}, req/s (server CPU per request) per 1 s window: ${seen.join(" ")}`);
await hand?.stop();
await tensorfn.stop();
