import { Pool } from "undici";
const [port, models, c, secs, rounds] = process.argv.slice(2);
const data = new Float32Array(3*224*224).map((_, i) => (i % 7) / 7);
const header = Buffer.from(JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 3, 224, 224], parameters: { binary_data_size: data.byteLength } }], parameters: { binary_data_output: true } }));
const body = Buffer.concat([header, Buffer.from(data.buffer)]);
const headers = { "content-type": "application/octet-stream", "inference-header-content-length": String(header.length) };
async function stats(m){ const r = await fetch(`http://127.0.0.1:${port}/v2/models/${m}/stats`); const j = await r.json(); const s = j.model_stats[0]; return { n: s.inference_count, e: s.execution_count, ci: +s.inference_stats.compute_infer.ns }; }
async function run(m) {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: Number(c), pipelining: 1 });
  let n = 0; const t0 = performance.now(); const warm = t0 + 2000; const end = t0 + Number(secs) * 1000; let s0;
  await Promise.all(Array.from({ length: Number(c) }, async () => {
    while (performance.now() < end) {
      const res = await pool.request({ path: `/v2/models/${m}/infer`, method: "POST", body, headers });
      await res.body.arrayBuffer(); if (res.statusCode !== 200) throw new Error(String(res.statusCode));
      if (performance.now() > warm) { if (!s0) s0 = stats(m); n++; }
    }
  }));
  const a = await s0, b = await stats(m);
  await pool.close();
  return `${(n / (Number(secs) - 2)).toFixed(1)}/s b${((b.n-a.n)/(b.e-a.e)).toFixed(1)} ${((b.ci-a.ci)/(b.e-a.e)/1e6).toFixed(1)}ms`;
}
for (let r = 0; r < Number(rounds); r++) { const out = []; const ms = models.split(","); if (r % 2) ms.reverse(); for (const m of ms) out.push(`${m}: ${await run(m)}`); console.log(`round ${r + 1}: ${out.join("  ")}`); }
