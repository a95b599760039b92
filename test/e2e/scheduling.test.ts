import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, TARGET_RUNTIME } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// resnet with one instance, no batching and room for ONE queued request: a batch of 32 images
// keeps the instance busy for about a second, long enough to fill and drain the queue over HTTP.
let server: TestServer;
beforeAll(async () => {
  const repo = tempRepository("resnet");
  writeFileSync(
    join(repo, "resnet", "function.yaml"),
    [
      "max_batch_size: 32",
      "instance_group: [{ count: 1, kind: KIND_CPU }]",
      "dynamic_batching:",
      "  default_queue_policy: { max_queue_size: 1 }",
      "",
    ].join("\n"),
  );
  server = await startServer({ repository: repo });
});
afterAll(() => server.close());

function resnetRequest(batch: number, signal?: AbortSignal) {
  const bytes = batch * 3 * 224 * 224 * 4;
  const header = new TextEncoder().encode(
    JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [batch, 3, 224, 224], parameters: { binary_data_size: bytes } }] }),
  );
  const body = new Uint8Array(header.length + bytes);
  body.set(header);
  return fetch(`${server.url}/v2/models/resnet/infer`, {
    method: "POST",
    body,
    signal,
    headers: { "Inference-Header-Content-Length": String(header.length) },
  });
}

async function stats() {
  return (await (await fetch(`${server.url}/v2/models/resnet/stats`)).json()).model_stats[0];
}

/** Polls /metrics until `count` requests of resnet are queued, not yet executing (bounded). */
async function untilQueued(count: number) {
  for (let i = 0; i < 5000; i++) {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const queued = /nv_inference_pending_request_count\{model="resnet",version="1"\} (\d+)/.exec(text);
    if (queued && Number(queued[1]) >= count) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never saw ${count} queued request(s)`);
}

/**
 * Polls the stats until `done` holds (bounded): the queue is observable only through them. The
 * bound is generous: under Bun, reading and decoding the 19 MB batch of 32 once outlasted 500 polls.
 */
async function until(done: (s: Awaited<ReturnType<typeof stats>>) => boolean) {
  for (let i = 0; i < 5000; i++) {
    const s = await stats();
    if (done(s)) return s;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error("condition never held");
}

describe("queue policy over HTTP", () => {
  it("refuses with 503 'Exceeds maximum queue size' once the one queue slot is taken", async () => {
    const before = await stats();
    const running = resnetRequest(32);
    await until((s) => s.inference_stats.queue.count > before.inference_stats.queue.count); // dispatched
    const [b, c] = await Promise.all([resnetRequest(1), resnetRequest(1)]);
    const refused = [b, c].filter((r) => r.status === 503);
    expect(refused).toHaveLength(1);
    expect((await refused[0]!.json()).error).toMatch(/Exceeds maximum queue size/);
    expect([b, c].filter((r) => r.status === 200)).toHaveLength(1);
    expect((await running).status).toBe(200);
  });

  it("cancels a queued request when its client disconnects, never runs it, and frees its slot", async () => {
    const before = await stats();
    const running = resnetRequest(32);
    await until((s) => s.inference_stats.queue.count > before.inference_stats.queue.count);
    const controller = new AbortController();
    const queued = resnetRequest(1, controller.signal).catch((e: Error) => e);
    // Wait until the server has it queued (its 600 kB body read and decoded: slower under Deno
    // than a fixed number of round trips allowed), then let its client go away.
    await untilQueued(1);
    controller.abort();
    expect(await queued).toBeInstanceOf(Error);
    await until((s) => s.inference_stats.fail.count > before.inference_stats.fail.count); // cancelled server-side
    const next = await resnetRequest(1);
    expect(next.status).toBe(200);
    expect((await running).status).toBe(200);
    const after = await stats();
    // The batch of 32 and `next` executed; the cancelled request never did.
    expect(after.execution_count - before.execution_count).toBe(2);
    expect(after.inference_count - before.inference_count).toBe(33);
  });

  it("rejects a non-integer priority with 400 naming the parameter", async () => {
    const res = await fetch(`${server.url}/v2/models/resnet/infer`, {
      method: "POST",
      body: JSON.stringify({ parameters: { priority: "high" }, inputs: [{ name: "input", datatype: "FP32", shape: [1, 3, 224, 224], data: new Array(150528).fill(0) }] }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/priority/);
  });
});
