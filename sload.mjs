import { Pool } from "undici";
import { readFileSync } from "node:fs";
const [port, n, pid] = process.argv.slice(2);
const ints = new Int32Array(16).map((_, i) => i);
const header = Buffer.from(JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } }, { name: "INPUT1", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } }], outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }, { name: "OUTPUT1", parameters: { binary_data: true } }] }));
const body = Buffer.concat([header, Buffer.from(ints.buffer), Buffer.from(ints.buffer)]);
const headers = { "content-type": "application/octet-stream", "inference-header-content-length": String(header.length) };
const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1, pipelining: 1 });
const one = async () => { const r = await pool.request({ path: "/v2/models/simple/infer", method: "POST", body, headers }); await r.body.arrayBuffer(); if (r.statusCode !== 200) throw new Error(r.statusCode); };
for (let i = 0; i < 3000; i++) await one();
const ctx = () => { let v = 0, nv = 0, cpu = 0; for (const t of require_tasks()) { const s = readFileSync(`/proc/${pid}/task/${t}/status`, "utf8"); v += +s.match(/^voluntary_ctxt_switches:\s+(\d+)/m)[1]; nv += +s.match(/^nonvoluntary_ctxt_switches:\s+(\d+)/m)[1]; const st = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8").split(") ")[1].split(" "); cpu += +st[11] + +st[12]; } return { v, nv, cpu }; };
import { readdirSync } from "node:fs";
function require_tasks() { return readdirSync(`/proc/${pid}/task`); }
const a = ctx(); const t0 = performance.now();
for (let i = 0; i < +n; i++) await one();
const secs = (performance.now() - t0) / 1000; const b = ctx();
console.log(`port ${port}: ${(+n / secs).toFixed(0)} req/s, vol ctx/req ${((b.v - a.v) / n).toFixed(2)}, invol ${((b.nv - a.nv) / n).toFixed(2)}, server CPU µs/req ${((b.cpu - a.cpu) * 10000 / n).toFixed(0)}`);
await pool.close();
