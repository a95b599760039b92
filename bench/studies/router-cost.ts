// The runtime's own CPU per inference request, without HTTP (issue 11): requests go straight into
// the router (runtime/http/router.ts) with their body already in memory, `inflight` at a
// time, on one thread; the answer is µs of this process's CPU per request, which the machine's
// other load barely moves (unlike a served req/s). What it leaves out — parsing and writing HTTP —
// is the same for any Node server. Usage:
//   tsx bench/studies/router-cost.ts [model=simple] [binary|json] [inflight=8] [seconds=3]
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRuntime } from "../../runtime/mod.ts";
import type { DirectBody } from "../../runtime/mod.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";

const [model = "simple", kind = "binary", inflight = "8", seconds = "3"] = process.argv.slice(2);
const functions = fileURLToPath(new URL("../../functions", import.meta.url));
const repo = mkdtempSync(join(tmpdir(), "tensorfn-router-cost-"));
cpSync(join(functions, model), join(repo, model), { recursive: true });
const quiet = { info() {}, warn() {}, error() {} };
const runtime = await createRuntime({ platform: { ...createNodePlatform(), log: quiet }, repository: repo, controlMode: "none" });

const encoder = new TextEncoder();
const ints = Array.from({ length: 16 }, (_, i) => i);
const floats = Array.from({ length: 512 }, (_, i) => (i % 7) / 7);
const inputs =
  model === "simple"
    ? [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], values: new Int32Array(ints) },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], values: new Int32Array(ints) },
      ]
    : [{ name: "input", datatype: "FP32", shape: [1, 512], values: new Float32Array(floats) }];
let body: Uint8Array;
const headers: Record<string, string> = {};
if (kind === "json") {
  body = encoder.encode(JSON.stringify({ inputs: inputs.map(({ values, ...t }) => ({ ...t, data: [...values] })) }));
} else {
  const head = encoder.encode(
    JSON.stringify({ inputs: inputs.map(({ values, ...t }) => ({ ...t, parameters: { binary_data_size: values.byteLength } })), parameters: { binary_data_output: true } }),
  );
  const parts = [head, ...inputs.map((t) => new Uint8Array(t.values.buffer))];
  body = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) (body.set(p, at), (at += p.byteLength));
  headers["inference-header-content-length"] = String(head.byteLength);
}
headers["content-length"] = String(body.byteLength);
const signal = new AbortController().signal;
const request = () => {
  const direct: DirectBody = { signal, read: async () => body.slice() };
  return runtime.router({ method: "POST", url: `/v2/models/${model}/infer`, header: (h) => headers[h], body: direct });
};

async function round(ms: number): Promise<{ requests: number; cpuUs: number; wallMs: number }> {
  let requests = 0;
  const end = performance.now() + ms;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Number(inflight) }, async () => {
      while (performance.now() < end) {
        const reply = await request();
        if (reply.status !== 200) throw new Error(`status ${reply.status}: ${String(reply.body)}`);
        requests++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { requests, cpuUs: cpu.user + cpu.system, wallMs: performance.now() - t0 };
}

await round(1000);
const r = await round(Number(seconds) * 1000);
console.log(
  JSON.stringify({ model, kind, inflight: Number(inflight), requests: r.requests, perS: Math.round((r.requests / r.wallMs) * 1000), cpuUsPerRequest: +(r.cpuUs / r.requests).toFixed(1), wallUsPerRequest: +((r.wallMs * 1000) / r.requests).toFixed(1) }),
);
await runtime.stop();
process.exit(0);
