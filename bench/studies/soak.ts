// Soak (issue 10, "Tests"; not CI): mixed load against `tensorfn dev` on a temp repository for an
// hour by default, with parks of mlp, reloads of simple (its function.yaml rewritten) and bad
// requests; per interval it samples RSS (/proc/<pid>/status), latency p50/p99 of the good
// requests and the error counts. Writes bench/out/soak.json, bench/out/soak.svg (RSS and p99 over
// time, a hand-written polyline) and bench/out/soak.md (the table for docs/notes/2026-11-hardening-runs.md).
//
//   npx tsx bench/studies/soak.ts [--minutes 60] [--clients 8] [--interval-secs 60] [--park-secs 30] [--reload-secs 45]
import { parseArgs } from "node:util";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Pool } from "undici";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "60" },
    clients: { type: "string", default: "8" },
    "interval-secs": { type: "string" },
    "park-secs": { type: "string", default: "30" },
    "reload-secs": { type: "string", default: "45" },
    out: { type: "string", default: "bench/out/soak" },
  },
});
const minutes = Number(values.minutes);
const clients = Number(values.clients);
const intervalMs = Number(values["interval-secs"] ?? Math.max(10, Math.round((minutes * 60) / 60))) * 1000;
const repository = tempRepository("mlp", "simple", "simple_identity");
const server = await spawnServer(process.execPath, ["adapters/node/bin.mjs", "dev", repository, "--port", "0"], { timeoutMs: 120_000 });
const pid = server.child.pid!;
const pool = new Pool(server.url, { connections: clients + 2 });
const json = { "content-type": "application/json", host: "127.0.0.1" };

const mlpBody = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: Array.from({ length: 512 }, (_, i) => (i % 10) / 10) }] });
const simpleBody = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })) });
const identityHeader = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 1], parameters: { binary_data_size: 9 } }] });
const identityBody = Buffer.concat([Buffer.from(identityHeader), Buffer.from([5, 0, 0, 0]), Buffer.from("hello")]);
/** Requests a careless client sends; each must be refused with a 4xx. */
const BAD = [
  { path: "/v2/models/mlp/infer", body: '{"inputs":[{"name":"input","datatype":"FP32","shape":[1,512],"data":[1,2' },
  { path: "/v2/models/mlp/infer", body: '{"inputs":[{"name":"input","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]}' },
  { path: "/v2/models/nope/infer", body: simpleBody },
  { path: "/v2/models/simple/infer", body: '{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,16],"data":[]}]}' },
];

interface Interval { t: number; rssMB: number; threads: number; ok: number; bad: number; shed: number; errors: number; p50: number; p99: number; parks: number; reloads: number }
let window = { latencies: [] as number[], ok: 0, bad: 0, shed: 0, errors: 0, parks: 0, reloads: 0 };
const firstErrors: string[] = [];
function error(message: string) {
  window.errors++;
  if (firstErrors.length < 20) firstErrors.push(`${((performance.now() - started) / 1000).toFixed(0)} s: ${message}`);
}

const started = performance.now();
const end = started + minutes * 60_000;
let counter = 0;
async function client(): Promise<void> {
  while (performance.now() < end) {
    const n = counter++ % 20;
    const bad = n === 7 || n === 17 ? BAD[counter % BAD.length]! : undefined;
    const req = bad ?? (n < 14 ? { path: "/v2/models/mlp/infer", body: mlpBody } : n < 18 ? { path: "/v2/models/simple/infer", body: simpleBody } : { path: "/v2/models/simple_identity/infer", body: identityBody, binary: true });
    const headers = "binary" in req ? { ...json, "inference-header-content-length": String(identityHeader.length) } : json;
    const t0 = performance.now();
    try {
      const res = await pool.request({ method: "POST", path: req.path, body: req.body, headers, headersTimeout: 30_000, bodyTimeout: 30_000 });
      await res.body.dump();
      const ms = performance.now() - t0;
      if (bad) {
        if (res.statusCode >= 400 && res.statusCode < 500) window.bad++;
        else error(`bad request to ${req.path} answered ${res.statusCode}`);
      } else if (res.statusCode === 200) {
        window.ok++;
        window.latencies.push(ms);
      } else if (res.statusCode === 503) window.shed++;
      else error(`${req.path} answered ${res.statusCode}`);
    } catch (e) {
      error(`${req.path}: ${(e as Error).message}`);
    }
  }
}

async function control(path: string): Promise<number> {
  const res = await pool.request({ method: "POST", path, body: "{}", headers: json, headersTimeout: 60_000 });
  await res.body.dump();
  return res.statusCode;
}
const yaml = join(repository, "simple", "function.yaml");
const original = readFileSync(yaml, "utf8");
const timers = [
  setInterval(() => void control("/v2/repository/models/mlp/park").then((s) => (s === 200 ? window.parks++ : error(`park answered ${s}`)), (e) => error(`park: ${e.message}`)), Number(values["park-secs"]) * 1000),
  setInterval(() => {
    // A real change (the dev server reloads a function whose files changed), then back.
    writeFileSync(yaml, `${original}# soak reload ${window.reloads++}\n`);
  }, Number(values["reload-secs"]) * 1000),
];

const MB = 1024 * 1024;
const rows: Interval[] = [];
function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}
function sample() {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const row: Interval = {
    t: Math.round((performance.now() - started) / 1000),
    rssMB: Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024,
    threads: Number(/Threads:\s+(\d+)/.exec(status)![1]),
    ok: window.ok, bad: window.bad, shed: window.shed, errors: window.errors,
    p50: percentile(window.latencies, 50), p99: percentile(window.latencies, 99),
    parks: window.parks, reloads: window.reloads,
  };
  rows.push(row);
  window = { latencies: [], ok: 0, bad: 0, shed: 0, errors: 0, parks: 0, reloads: 0 };
  console.log(`${String(row.t).padStart(6)} s  RSS ${row.rssMB.toFixed(0).padStart(5)} MB  threads ${row.threads}  ok ${row.ok}  bad ${row.bad}  503 ${row.shed}  errors ${row.errors}  p50 ${row.p50.toFixed(1)} ms  p99 ${row.p99.toFixed(1)} ms  parks ${row.parks}  reloads ${row.reloads}`);
}
console.log(`soak: ${minutes} min, ${clients} clients against tensorfn dev ${repository} (pid ${pid}), sampled every ${intervalMs / 1000} s`);
const sampler = setInterval(sample, intervalMs);
await Promise.all(Array.from({ length: clients }, client));
clearInterval(sampler);
for (const t of timers) clearInterval(t);
sample();
await pool.close();
const exit = await server.stop();
rmSync(repository, { recursive: true, force: true });

mkdirSync("bench/out", { recursive: true });
writeFileSync(`${values.out}.json`, JSON.stringify({ minutes, clients, intervalMs, rows, firstErrors, exit }, null, 1));
writeFileSync(`${values.out}.svg`, plot(rows));
const table = [
  "| t (s) | RSS (MB) | threads | ok | bad (4xx, expected) | 503 | errors | p50 (ms) | p99 (ms) | parks | reloads |",
  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...rows.map((r) => `| ${r.t} | ${r.rssMB.toFixed(0)} | ${r.threads} | ${r.ok} | ${r.bad} | ${r.shed} | ${r.errors} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.parks} | ${r.reloads} |`),
].join("\n");
writeFileSync(`${values.out}.md`, `${table}\n`);
console.log(`\n${table}\n\nserver exit ${exit}; first errors: ${firstErrors.length ? `\n  ${firstErrors.join("\n  ")}` : "none"}\nwrote ${values.out}.json, .svg, .md`);

/** RSS (left axis) and p99 latency (right axis) over time as two polylines; no dependencies. */
function plot(rows: Interval[]): string {
  const W = 720, H = 300, L = 60, R = 60, T = 20, B = 40;
  const tMax = Math.max(1, ...rows.map((r) => r.t));
  const rssMax = Math.max(1, ...rows.map((r) => r.rssMB)) * 1.1;
  const p99Max = Math.max(1, ...rows.map((r) => (Number.isFinite(r.p99) ? r.p99 : 0))) * 1.1;
  const x = (t: number) => L + ((W - L - R) * t) / tMax;
  const y = (v: number, max: number) => T + (H - T - B) * (1 - v / max);
  const line = (pick: (r: Interval) => number, max: number) => rows.filter((r) => Number.isFinite(pick(r))).map((r) => `${x(r.t).toFixed(1)},${y(pick(r), max).toFixed(1)}`).join(" ");
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">
<rect width="${W}" height="${H}" fill="white"/>
<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#999"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#999"/><line x1="${W - R}" y1="${T}" x2="${W - R}" y2="${H - B}" stroke="#999"/>
${ticks.map((f) => `<text x="${L - 6}" y="${y(f * rssMax, rssMax) + 4}" text-anchor="end" fill="#1f77b4">${(f * rssMax).toFixed(0)}</text><text x="${W - R + 6}" y="${y(f * p99Max, p99Max) + 4}" fill="#d62728">${(f * p99Max).toFixed(1)}</text><text x="${x(f * tMax)}" y="${H - B + 16}" text-anchor="middle">${(f * tMax / 60).toFixed(1)}</text>`).join("\n")}
<text x="${(W) / 2}" y="${H - 6}" text-anchor="middle">minutes</text>
<text x="${L}" y="${T - 6}" fill="#1f77b4">RSS (MB)</text><text x="${W - R}" y="${T - 6}" text-anchor="end" fill="#d62728">p99 latency (ms)</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="${line((r) => r.rssMB, rssMax)}"/>
<polyline fill="none" stroke="#d62728" stroke-width="2" points="${line((r) => r.p99, p99Max)}"/>
</svg>
`;
}
