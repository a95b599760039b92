import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Issue 10 item 6: a full queue used to read and decode a JSON body before refusing it (p50
// 622 ms under load). Now the room check comes before the body is read: the 503 arrives while the
// client is still sending. resnet with one instance and one queue slot; a batch of 32 keeps the
// instance busy for about a second.
let server: TestServer;
beforeAll(async () => {
  const repo = tempRepository("resnet");
  writeFileSync(
    join(repo, "resnet", "function.yaml"),
    ["max_batch_size: 32", "instance_group: [{ count: 1, kind: KIND_CPU }]", "dynamic_batching:", "  default_queue_policy: { max_queue_size: 1 }", ""].join("\n"),
  );
  server = await startServer({ repository: repo });
}, 120_000);
afterAll(() => server.close());

function resnetRequest(batch: number) {
  const bytes = batch * 3 * 224 * 224 * 4;
  const header = new TextEncoder().encode(
    JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [batch, 3, 224, 224], parameters: { binary_data_size: bytes } }] }),
  );
  const body = new Uint8Array(header.length + bytes);
  body.set(header);
  return fetch(`${server.url}/v2/models/resnet/infer`, { method: "POST", body, headers: { "Inference-Header-Content-Length": String(header.length) } });
}

/** Polls a metric until `done` holds (bounded): the queue is observable only from outside. */
async function until(name: string, done: (value: number) => boolean) {
  for (let i = 0; i < 2000; i++) {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const value = Number(new RegExp(`^${name}\\{[^}]*model="resnet"[^}]*\\} (\\S+)`, "m").exec(text)?.[1] ?? NaN);
    if (done(value)) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`${name} never reached the expected value`);
}

async function queueCount(): Promise<number> {
  return (await (await fetch(`${server.url}/v2/models/resnet/stats`)).json()).model_stats[0].inference_stats.queue.count;
}

/**
 * Starts a JSON upload of `declared` bytes by hand, sends only its first `sent` bytes, and
 * resolves with the response head and how long it took; the rest of the body is never sent.
 */
function partialUpload(declared: number, sent: number): Promise<{ head: string; ms: number }> {
  const { hostname, port } = new URL(server.url);
  const prefix = '{"inputs":[{"name":"input","datatype":"FP32","shape":[32,3,224,224],"data":[';
  const chunk = prefix + "0,".repeat((sent - prefix.length) / 2);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`POST /v2/models/resnet/infer HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
      socket.write(chunk);
    });
    const started = performance.now();
    // Bounded: a server that waits for the rest of the body never answers at all.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("no answer within 5 s: the server is waiting for the body"));
    }, 5000);
    let head = "";
    socket.on("data", (data) => {
      head += data.toString("latin1");
      if (!head.includes("\r\n\r\n") || !head.includes("}")) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ head, ms: performance.now() - started });
    });
    socket.on("error", reject);
  });
}

/**
 * Sends a request's head and the first part of its body now, the rest when `rest()` is called;
 * `answer` resolves with the whole response.
 */
function splitUpload(first: string, second: string): { answer: Promise<string>; rest: () => void } {
  const { hostname, port } = new URL(server.url);
  const socket = connect(Number(port), hostname, () => {
    socket.write(`POST /v2/models/resnet/infer HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${first.length + second.length}\r\nConnection: close\r\n\r\n${first}`);
  });
  let text = "";
  socket.on("data", (data) => (text += data.toString("latin1")));
  const answer = new Promise<string>((resolve, reject) => {
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  });
  return { answer, rest: () => void socket.write(second) };
}

describe("a full queue", () => {
  it("answers 503 before the body is read, while the client is still sending", async () => {
    const before = await queueCount();
    const running = resnetRequest(32);
    for (let i = 0; i < 2000 && (await queueCount()) === before; i++) await new Promise((resolve) => setImmediate(resolve)); // dispatched
    const queued = resnetRequest(1);
    await until("nv_inference_pending_request_count", (v) => v === 1); // the one slot is taken
    const { head, ms } = await partialUpload(50_000_000, 1_000_000);
    expect(head).toMatch(/^HTTP\/1\.1 503/);
    expect(head).toMatch(/Exceeds maximum queue size/);
    expect(ms).toBeLessThan(1000);
    expect((await running).status).toBe(200);
    expect((await queued).status).toBe(200);
  }, 60_000);

  it("found full once the body is in, refuses it before decoding it", async () => {
    const before = await queueCount();
    const running = resnetRequest(32);
    for (let i = 0; i < 2000 && (await queueCount()) === before; i++) await new Promise((resolve) => setImmediate(resolve)); // dispatched
    // Admitted while the slot is free: its body, not valid JSON, is still arriving.
    const upload = splitUpload('{"inputs": [', "this is not JSON");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const queued = resnetRequest(1);
    await until("nv_inference_pending_request_count", (v) => v === 1); // now the slot is taken
    upload.rest();
    // Decoded first, it would be a 400 for the JSON; refused first, a 503 for the queue.
    const answer = await upload.answer;
    expect(answer).toMatch(/^HTTP\/1\.1 503/);
    expect(answer).toMatch(/Exceeds maximum queue size/);
    expect((await running).status).toBe(200);
    expect((await queued).status).toBe(200);
  }, 60_000);
});
