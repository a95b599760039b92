// Servers already running, side by side: `mlp` at one binary request per call, a closed loop of `c`
// undici connections against each in turn, `rounds` times (their order fixed, so the machine's drift
// falls on all), 0.5 s warm-up + the rest of `secs` counted; prints req/s per port per round. Start the
// servers first, e.g. two tensorfn checkouts and the hand-written baseline on a copy of functions/mlp:
//   node <checkout>/adapters/node/bin.mjs serve --repo <repo> --port 8201 --model-control-mode none
//   node --import tsx bench/suites/handwritten-server.ts --repo <repo> --models mlp --port 8203
// Usage: [MODEL=mlp] node bench/studies/served-ab.mjs <port>[,<port>…] [c=1] [secs=3] [rounds=3]
import { Pool } from "undici";
const [ports, c = "1", secs = "3", rounds = "3"] = process.argv.slice(2);
const data = new Float32Array(512).map((_, i) => (i % 7) / 7);
const header = Buffer.from(JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], parameters: { binary_data_size: 2048 } }], parameters: { binary_data_output: true } }));
const body = Buffer.concat([header, Buffer.from(data.buffer)]);
const headers = { "content-type": "application/octet-stream", "inference-header-content-length": String(header.length) };
async function run(port) {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: Number(c), pipelining: 1 });
  let n = 0; const end = performance.now() + Number(secs) * 1000;
  const warm = performance.now() + 500;
  await Promise.all(Array.from({ length: Number(c) }, async () => {
    while (performance.now() < end) {
      const res = await pool.request({ path: `/v2/models/${process.env.MODEL ?? "mlp"}/infer`, method: "POST", body, headers });
      await res.body.arrayBuffer(); if (res.statusCode !== 200) throw new Error(String(res.statusCode));
      if (performance.now() > warm) n++;
    }
  }));
  await pool.close();
  return n / (Number(secs) - 0.5);
}
for (let r = 0; r < Number(rounds); r++) {
  const out = [];
  for (const p of ports.split(",")) out.push(`${p}: ${(await run(p)).toFixed(0)}`);
  console.log(`round ${r + 1}: ${out.join("  ")}`);
}
