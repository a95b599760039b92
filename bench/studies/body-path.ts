// A/B of the request body path (issue 11): the same function served by two server processes,
// one reading bodies through DirectBody, one through @hono/node-server's web-stream bridge;
// rounds alternate between them. Per round: req/s, p50 latency, server CPU per request (from
// /proc). Usage: tsx bench/studies/body-path.ts [model=simple_identity] [rounds=6] [seconds=2]
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";

const [model = "simple_identity", rounds = "6", seconds = "2"] = process.argv.slice(2);
const ints = Array.from({ length: 16 }, (_, i) => i);
const body = JSON.stringify({
  inputs:
    model === "simple_identity"
      ? [{ name: "INPUT0", datatype: "BYTES", shape: [1, 16], data: ints.map(String) }]
      : [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: ints },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: ints },
        ],
});

async function start(mode: string) {
  const script = fileURLToPath(new URL("./body-path-server.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, mode], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve) => child.stdout.once("data", (d) => resolve(Number(String(d).trim()))));
  return { mode, child, port, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) };
}
type Server = Awaited<ReturnType<typeof start>>;

function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, USER_HZ = 100
}

function post(s: Server): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: s.port, path: `/v2/models/${model}/infer`, method: "POST", agent: s.agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`status ${res.statusCode}`))));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function round(s: Server, ms: number) {
  const lat: number[] = [];
  const cpu0 = cpuMs(s.child.pid!);
  const t0 = performance.now();
  while (performance.now() - t0 < ms) lat.push(await post(s));
  const wall = performance.now() - t0;
  const cpu = cpuMs(s.child.pid!) - cpu0;
  lat.sort((a, b) => a - b);
  return { rps: (lat.length * 1000) / wall, p50us: lat[lat.length >> 1]! * 1000, cpuUs: (cpu * 1000) / lat.length };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const servers = [await start("bridge"), await start("direct")];
process.on("exit", () => servers.forEach((s) => s.child.kill()));
for (const s of servers) await round(s, 1000); // warm-up
const results: Record<string, { rps: number; p50us: number; cpuUs: number }[]> = { bridge: [], direct: [] };
for (let r = 0; r < Number(rounds); r++) for (const s of r % 2 ? [...servers].reverse() : servers) results[s.mode]!.push(await round(s, Number(seconds) * 1000));
for (const [mode, rs] of Object.entries(results)) {
  const show = (k: "rps" | "p50us" | "cpuUs") => `${median(rs.map((x) => x[k])).toFixed(0)} [${Math.min(...rs.map((x) => x[k])).toFixed(0)}–${Math.max(...rs.map((x) => x[k])).toFixed(0)}]`;
  console.log(`${model} c=1 ${mode.padEnd(6)} req/s ${show("rps")}  p50 µs ${show("p50us")}  server CPU µs/req ${show("cpuUs")}`);
}
for (const s of servers) s.child.kill();
