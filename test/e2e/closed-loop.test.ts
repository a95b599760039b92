import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "undici";
import { startServer, TARGET_RUNTIME } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// `simple` batched with a long queue delay: a batch that waited for it is plain in the statistics.
const DELAY_MS = 200;
let server: TestServer;
beforeAll(async () => {
  const repo = tempRepository("simple");
  writeFileSync(join(repo, "simple", "function.yaml"), `max_batch_size: 8\ndynamic_batching: { max_queue_delay_microseconds: ${DELAY_MS * 1000} }\n`);
  server = await startServer({ repository: repo, controlMode: "none" });
});
afterAll(() => server.close());

const body = JSON.stringify({
  inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })),
});

async function infer(client: Client): Promise<number[]> {
  const response = await client.request({ method: "POST", path: "/v2/models/simple/infer", body, headers: { "content-type": "application/json" } });
  const json = (await response.body.json()) as { outputs: { name: string; data: number[] }[] };
  expect(response.statusCode).toBe(200);
  return json.outputs.find((o) => o.name === "OUTPUT0")!.data;
}

/** Executions, inferences and queue time (ms) of `simple` so far, read over `client`'s own connection. */
async function stats(client: Client) {
  const response = await client.request({ method: "GET", path: "/v2/models/simple/stats" });
  const s = ((await response.body.json()) as { model_stats: { execution_count: number; inference_count: number; inference_stats: { queue: { ns: number } } }[] }).model_stats[0]!;
  return { executions: s.execution_count, inferences: s.inference_count, queueMs: s.inference_stats.queue.ns / 1e6 };
}

// node:http reports connections (Node, Deno); Bun.serve does not (there the batcher waits as configured).
describe.skipIf(TARGET_RUNTIME === "bun")("closed loop: the batcher does not wait for requests that cannot arrive", () => {
  it("two keep-alive clients, each waiting for its answer, are batched together as soon as both requests are in, not after the delay (a probe's connection beside them)", async () => {
    const [a, b, probe] = [new Client(server.url), new Client(server.url), new Client(server.url)];
    const ready = async () => {
      const response = await probe.request({ method: "GET", path: "/v2/health/ready" });
      await response.body.text();
      expect(response.statusCode).toBe(200);
    };
    try {
      await ready();
      // Once both connections carried a few requests each, the server trusts that clients reuse them.
      for (let round = 0; round < 6; round++) await Promise.all([infer(a), infer(b)]);
      const before = await stats(a);
      const rounds = 10;
      for (let round = 0; round < rounds; round++) {
        const [x, y] = await Promise.all([infer(a), infer(b), ready()]);
        expect(x).toEqual(Array.from({ length: 16 }, (_, i) => 2 * i));
        expect(y).toEqual(x);
      }
      const after = await stats(a);
      // One execution of both requests per round…
      expect(after.executions - before.executions).toBe(rounds);
      expect(after.inferences - before.inferences).toBe(2 * rounds);
      // …without waiting out the delay: 20 requests that each waited it would have queued 20 × 200 ms.
      expect(after.queueMs - before.queueMs).toBeLessThan((2 * rounds * DELAY_MS) / 4);
      // …and the metrics say why each of those batches left.
      const metrics = await (await probe.request({ method: "GET", path: "/metrics" })).body.text();
      const noArrivals = /^tensorfn_batch_dispatches_total\{model="simple",version="1",reason="no_arrivals"\} (\d+)$/m.exec(metrics);
      expect(Number(noArrivals?.[1])).toBeGreaterThanOrEqual(rounds);
    } finally {
      await Promise.all([a.close(), b.close(), probe.close()]);
    }
  });
});
