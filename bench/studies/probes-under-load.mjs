// Readiness and scrape latency while `mlp` is saturated by 32 JSON clients (issue 11, target 7), on
// servers already running side by side (start them as bench/studies/served-ab.mjs says): per round and
// port, 1 s of load to settle, then `secs` of `GET /v2/health/ready` one after another 10 ms apart,
// with (`scrapes`=1) or without (0) a `GET /metrics` every 200 ms beside them, as `npm run bench` probes.
// Usage: node bench/studies/probes-under-load.mjs <port>[,<port>…] [scrapes=1] [secs=5] [rounds=3]
import { Pool, request } from "undici";

const [ports, scrapes = "1", secs = "5", rounds = "3"] = process.argv.slice(2);
const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: Array.from({ length: 512 }, (_, i) => (i % 7) / 7) }] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (values, q) => (values.length ? [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))].toFixed(2) : "-");

async function measure(port) {
  const base = `http://127.0.0.1:${port}`;
  const pool = new Pool(base, { connections: 32 });
  let stopping = false;
  let answered = 0;
  const load = Promise.all(
    Array.from({ length: 32 }, async () => {
      while (!stopping) {
        const res = await pool.request({ path: "/v2/models/mlp/infer", method: "POST", body, headers: { "content-type": "application/json" } });
        await res.body.arrayBuffer();
        answered++;
      }
    }),
  );
  await sleep(1000);
  const ready = [];
  const scrape = [];
  const probe = async (path, into, gapMs) => {
    while (!stopping) {
      const started = performance.now();
      const res = await request(base + path);
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`${path}: HTTP ${res.statusCode}`);
      into.push(performance.now() - started);
      await sleep(Math.max(0, gapMs - (path === "/metrics" ? performance.now() - started : 0)));
    }
  };
  const counted = answered;
  const probes = [probe("/v2/health/ready", ready, 10), ...(scrapes === "1" ? [probe("/metrics", scrape, 200)] : [])];
  await sleep(Number(secs) * 1000);
  stopping = true;
  await Promise.all(probes);
  await load;
  await pool.close();
  const rate = (answered - counted) / Number(secs);
  return `${port}: ${rate.toFixed(0)} req/s, ready p50 ${quantile(ready, 0.5)} p99 ${quantile(ready, 0.99)} ms (${ready.length})` + (scrape.length ? `, scrape p50 ${quantile(scrape, 0.5)} max ${quantile(scrape, 1)} ms` : "");
}

for (let r = 0; r < Number(rounds); r++) {
  const list = ports.split(",");
  // The order turns each round, so the machine's drift does not fall on one server.
  const order = list.map((_, i) => list[(i + r) % list.length]);
  for (const port of order) console.log(`round ${r + 1} ${await measure(port)}`);
}
