// Issue 11, execution placement: a bundled function (`simple` or `mlp`, its own function.yaml) at a
// given concurrency through the real server with execution_thread main vs worker. Two servers, run
// alternately (several rounds, median and spread), so both see the same machine; server CPU per
// request from /proc/<pid>/stat (all its threads). JSON tensors.
// Usage: npx tsx bench/studies/execution-thread.ts [rounds=5] [seconds=2] [model=simple] [concurrency=1]
import { readFileSync, writeFileSync } from "node:fs";
import { parseDocument } from "yaml";
import { join } from "node:path";
import { Pool } from "undici";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";

const rounds = Number(process.argv[2] ?? 5);
const seconds = Number(process.argv[3] ?? 2);
const model = process.argv[4] ?? "simple";
const concurrency = Number(process.argv[5] ?? 1);
const ticks = 100; // USER_HZ on Linux

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / ticks; // utime + stime
}

async function start(thread: "main" | "worker") {
  const repo = tempRepository(model);
  // Merged into the file's own parameters (the bundled mlp has some).
  const file = join(repo, model, "function.yaml");
  const doc = parseDocument(readFileSync(file, "utf8"));
  doc.setIn(["parameters", "execution_thread"], thread);
  writeFileSync(file, doc.toString());
  return await spawnServer("node", ["adapters/node/bin.mjs", "serve", "--repo", repo, "--port", "0", "--model-control-mode", "none"]);
}

const inputs =
  model === "mlp"
    ? [{ name: "input", datatype: "FP32", shape: [1, 512], data: Array.from({ length: 512 }, (_, i) => (i % 7) / 7) }]
    : [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
      ];
const body = JSON.stringify({ inputs });

async function measure(url: string, pid: number) {
  const pool = new Pool(url, { connections: concurrency });
  const send = async () => {
    const res = await pool.request({ path: `/v2/models/${model}/infer`, method: "POST", body, headers: { "content-type": "application/json" } });
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
    await res.body.arrayBuffer();
  };
  for (let i = 0; i < 200; i++) await send(); // warm-up
  const latencies: number[] = [];
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const client = async () => {
    while (performance.now() - t0 < seconds * 1000) {
      const s = performance.now();
      await send();
      latencies.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(pid) - cpu0;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / wall, p50Us: latencies[Math.floor(latencies.length / 2)]! * 1000, cpuUsPerReq: (cpu / latencies.length) * 1e6 };
}

const servers = { main: await start("main"), worker: await start("worker") };
const results: Record<string, { rps: number; p50Us: number; cpuUsPerReq: number }[]> = { main: [], worker: [] };
try {
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (["main", "worker"] as const) : (["worker", "main"] as const);
    for (const thread of order) results[thread]!.push(await measure(servers[thread].url, servers[thread].child.pid!));
  }
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
console.log(`${model} @ c=${concurrency}, JSON, ${rounds} alternating rounds of ${seconds} s (median, [min–max])`);
for (const [thread, rows] of Object.entries(results)) {
  const col = (k: "rps" | "p50Us" | "cpuUsPerReq") => `${median(rows.map((x) => x[k])).toFixed(0)} [${spread(rows.map((x) => x[k]))}]`;
  console.log(`${thread.padEnd(6)}  req/s ${col("rps")}  p50 µs ${col("p50Us")}  server CPU µs/req ${col("cpuUsPerReq")}`);
}
const ratio = (k: "rps" | "p50Us" | "cpuUsPerReq") => (median(results.main!.map((x) => x[k])) / median(results.worker!.map((x) => x[k]))).toFixed(2);
console.log(`main ÷ worker: req/s ${ratio("rps")}×, p50 ${ratio("p50Us")}×, CPU/req ${ratio("cpuUsPerReq")}×`);
