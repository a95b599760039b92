// Issue 10, item 11: does RSS under steady mlp JSON load (16 clients) grow without bound (a leak)
// or level off (a plateau)? Runs `tensorfn serve` with bench/studies/memory-probe.mjs preloaded, drives
// closed-loop load from this process, and samples per interval: RSS (/proc/<pid>/status), the main
// isolate's V8 heap (used/total), external and arrayBuffers memory, and "native other" = RSS − heap
// total − external (ORT sessions and arenas, worker threads' isolates, glibc malloc retention).
//
//   npx tsx bench/studies/memory-growth.ts [--seconds 120] [--clients 16] [--gc] [--malloc-arena-max 2] [--label x]
//
// --gc forces a full GC before each sample (node --expose-gc), so heapUsed is live data only.
import { parseArgs } from "node:util";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { spawnServer } from "../../harness/server-process.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "120" },
    clients: { type: "string", default: "16" },
    gc: { type: "boolean", default: false },
    "malloc-arena-max": { type: "string" },
    label: { type: "string" },
    "sample-ms": { type: "string", default: "2000" },
  },
});
const seconds = Number(values.seconds);
const clients = Number(values.clients);
const label = values.label ?? `${values.gc ? "gc" : "nogc"}-arena${values["malloc-arena-max"] ?? "default"}`;
const probeFile = join(tmpdir(), `tensorfn-memory-${process.pid}.jsonl`);
rmSync(probeFile, { force: true });

const env: Record<string, string> = { TENSORFN_MEMORY_PROBE: probeFile, TENSORFN_MEMORY_PROBE_MS: values["sample-ms"]!, TENSORFN_MEMORY_PROBE_GC: values.gc ? "1" : "0" };
if (values["malloc-arena-max"]) env.MALLOC_ARENA_MAX = values["malloc-arena-max"];
const nodeArgs = [...(values.gc ? ["--expose-gc"] : []), "--import", "./bench/studies/memory-probe.mjs", "adapters/node/bin.mjs", "serve", "--repo", "functions", "--port", "0", "--model-control-mode", "explicit", "--load-model", "mlp"];
const server = await spawnServer(process.execPath, nodeArgs, { env, timeoutMs: 120_000 });
const pid = server.child.pid!;

const input = Array.from({ length: 512 }, (_, i) => ((i * 37) % 100) / 100);
const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: input }] });
const pool = new Pool(server.url, { connections: clients });
let answered = 0;
let failed = 0;
const end = performance.now() + seconds * 1000;
const load = Promise.all(
  Array.from({ length: clients }, async () => {
    while (performance.now() < end) {
      try {
        const res = await pool.request({ method: "POST", path: "/v2/models/mlp/infer", body, headers: { "content-type": "application/json" } });
        await res.body.dump();
        if (res.statusCode === 200) answered++;
        else failed++;
      } catch {
        failed++;
      }
    }
  }),
);

function rssOf(pid: number): { rss: number; threads: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { rss: Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024, threads: Number(/Threads:\s+(\d+)/.exec(status)![1]) };
}

interface Row { t: number; rssMB: number; heapUsedMB: number; heapTotalMB: number; externalMB: number; arrayBuffersMB: number; nativeOtherMB: number; threads: number; rps: number }
const rows: Row[] = [];
const MB = 1024 * 1024;
const started = performance.now();
let lastAnswered = 0;
let lastT = 0;
console.log(`memory-growth ${label}: ${clients} clients, mlp JSON, ${seconds} s, pid ${pid}`);
console.log("   t s   RSS MB  heapUsed  heapTotal  external  arrayBuf  native-other  threads  req/s");
while (performance.now() < end) {
  await new Promise((r) => setTimeout(r, 10_000));
  const t = (performance.now() - started) / 1000;
  const lines = readFileSync(probeFile, "utf8").trim().split("\n");
  const probe = JSON.parse(lines.at(-1)!) as { heapUsed: number; heapTotal: number; external: number; arrayBuffers: number };
  const { rss, threads } = rssOf(pid);
  const rps = (answered - lastAnswered) / (t - lastT);
  lastAnswered = answered;
  lastT = t;
  const row = { t: Math.round(t), rssMB: rss / MB, heapUsedMB: probe.heapUsed / MB, heapTotalMB: probe.heapTotal / MB, externalMB: probe.external / MB, arrayBuffersMB: probe.arrayBuffers / MB, nativeOtherMB: (rss - probe.heapTotal - probe.external) / MB, threads, rps };
  rows.push(row);
  const f = (n: number, w = 9) => n.toFixed(0).padStart(w);
  console.log(`${f(row.t, 6)} ${f(row.rssMB)} ${f(row.heapUsedMB)} ${f(row.heapTotalMB, 10)} ${f(row.externalMB)} ${f(row.arrayBuffersMB)} ${f(row.nativeOtherMB, 13)} ${f(threads, 8)} ${f(rps, 6)}`);
}
await load;
await pool.close();
await server.stop();
const probeSamples = readFileSync(probeFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
rmSync(probeFile, { force: true });
mkdirSync("bench/out", { recursive: true });
const out = `bench/out/memory-growth-${label}.json`;
writeFileSync(out, JSON.stringify({ label, clients, seconds, gc: values.gc, mallocArenaMax: values["malloc-arena-max"] ?? null, answered, failed, rows, probe: probeSamples }, null, 1));
console.log(`${answered} answered, ${failed} failed; wrote ${out}`);
