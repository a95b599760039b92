/**
 * What many open dashboard event streams cost the server: `node --import tsx bench/studies/dashboard-streams.ts
 * [root=.] [streams=1000] [seconds=10] [server flags…]` starts `tensorfn dev` from `root` (so an older checkout can be
 * compared), opens the streams, then reports the server's CPU (from /proc, Linux) and the latency of
 * `simple` inferences (one per 50 ms) over the window. Not part of CI.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";

const [root = ".", streamsArg = "1000", secondsArg = "10", ...serverArgs] = process.argv.slice(2);
const STREAMS = Number(streamsArg);
const SECONDS = Number(secondsArg);

const child = spawn("node", [join(root, "adapters/node/bin.mjs"), "dev", join(root, "functions"), "--port", "0", ...serverArgs], { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise<string>((resolve) => {
  let out = "";
  child.stdout!.on("data", (c: Buffer) => {
    out += c;
    const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
    if (m) resolve(m[1]!);
  });
});
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const cpuSeconds = () => {
  const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 10 ms
};
const body = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) });
const infer = () =>
  new Promise<number>((resolve, reject) => {
    const start = performance.now();
    const req = http.request(`${url}/v2/models/simple/infer`, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(performance.now() - start));
    });
    req.on("error", reject);
    req.end(body);
  });

async function measure(label: string): Promise<void> {
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  const latencies: number[] = [];
  // Paced (one request per 50 ms), so the CPU figure is the streams' cost, not the load's.
  while (performance.now() - t0 < SECONDS * 1000) {
    latencies.push(await infer());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const cpu = (cpuSeconds() - cpu0) / ((performance.now() - t0) / 1000);
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(2);
  console.log(`${label.padEnd(22)} server CPU ${(100 * cpu).toFixed(1)} %  infer n=${latencies.length} p50 ${q(0.5)} ms  p99 ${q(0.99)} ms  max ${q(1)} ms`);
}

await infer(); // load `simple` first
await measure("no streams");
let open = 0;
let refused = 0;
let events = 0;
const requests: http.ClientRequest[] = [];
await Promise.all(
  Array.from(
    { length: STREAMS },
    () =>
      new Promise<void>((resolve) => {
        const req = http.get(`${url}/v2/dashboard/events`, { agent }, (res) => {
          if (res.statusCode === 200) open++;
          else refused++;
          res.on("data", () => void events++);
          resolve();
        });
        req.on("error", () => resolve());
        requests.push(req);
      }),
  ),
);
console.log(`asked for ${STREAMS} streams: ${open} open, ${refused} refused`);
await measure(`${open} streams open`);
console.log(`events received: ${events}`);
for (const r of requests) r.destroy();
child.kill("SIGKILL");
process.exit(0);
