import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";

// One router (runtime/http/router.ts) answers every request, reached two ways: Node's listener
// hands it the IncomingMessage (NodeBody, replies written on node:http), Bun's and Deno's servers a
// web `Request` through `webFetch` (`runtime.fetch`). The same request must get the same answer
// either way: here each one is sent over HTTP (Node's way) and to `runtime.fetch` in this process
// (the web way), and the two answers compared.
let server: TestServer;
let pool: Pool;
const API_KEY = "router-test-key";
beforeAll(async () => {
  server = await startServer({ controlMode: "none", maxInputBytes: 4096, apiKeys: [API_KEY] });
  pool = new Pool(server.url, { connections: 2 });
});
afterAll(async () => {
  await pool?.close();
  await server?.close();
});

const ints = Array.from({ length: 16 }, (_, i) => i);
const json = JSON.stringify({
  id: "r1",
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: ints },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: ints.map(() => 2) },
  ],
});
const header = new TextEncoder().encode(
  JSON.stringify({
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } },
    ],
    outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }, { name: "OUTPUT1" }],
  }),
);
const binary = new Uint8Array([...header, ...new Uint8Array(new Int32Array(ints).buffer), ...new Uint8Array(new Int32Array(16).fill(3).buffer)]);
const auth = { authorization: `Bearer ${API_KEY}` };

interface Case {
  what: string;
  method: "GET" | "POST" | "OPTIONS";
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  status: number;
}

const cases: Case[] = [
  { what: "JSON inference", method: "POST", path: "/v2/models/simple/infer", headers: { ...auth, "content-type": "application/json" }, body: json, status: 200 },
  { what: "a version named in the path", method: "POST", path: "/v2/models/simple/versions/1/infer", headers: auth, body: json, status: 200 },
  { what: "binary tensors", method: "POST", path: "/v2/models/simple/infer", headers: { ...auth, "inference-header-content-length": String(header.byteLength) }, body: binary, status: 200 },
  { what: "an unknown function", method: "POST", path: "/v2/models/nope/infer", headers: auth, body: json, status: 404 },
  { what: "an unknown version", method: "POST", path: "/v2/models/simple/versions/9/infer", headers: auth, body: json, status: 404 },
  { what: "malformed JSON", method: "POST", path: "/v2/models/simple/infer", headers: auth, body: "{", status: 400 },
  { what: "a wrong datatype", method: "POST", path: "/v2/models/simple/infer", headers: auth, body: json.replace('"INT32"', '"FP32"'), status: 400 },
  { what: "a bad header length", method: "POST", path: "/v2/models/simple/infer", headers: { ...auth, "inference-header-content-length": "x" }, body: binary, status: 400 },
  { what: "a body over --max-input-size", method: "POST", path: "/v2/models/simple/infer", headers: auth, body: "x".repeat(5000), status: 413 },
  { what: "no key", method: "POST", path: "/v2/models/simple/infer", body: json, status: 401 },
  { what: "a wrong key", method: "POST", path: "/v2/models/simple/infer", headers: { authorization: "Bearer nope" }, body: json, status: 401 },
  { what: "liveness", method: "GET", path: "/v2/health/live", status: 200 },
  { what: "readiness", method: "GET", path: "/v2/health/ready", status: 200 },
  { what: "a function-style call", method: "POST", path: "/v1/functions/word_count", headers: { ...auth, "content-type": "application/json" }, body: '{"text": "a b c"}', status: 200 },
  { what: "a function-style call the handler refuses", method: "POST", path: "/v1/functions/word_count", headers: auth, body: "[]", status: 400 },
  { what: "a function-style call to a model without a handler", method: "POST", path: "/v1/functions/simple", headers: auth, body: "{}", status: 400 },
  { what: "a function-style call without a key", method: "POST", path: "/v1/functions/word_count", body: "{}", status: 401 },
  // OpenAI's routes answer errors in OpenAI's shape on the lane too; Triton's generate in KServe's.
  { what: "a chat completion for an unknown model", method: "POST", path: "/v1/chat/completions", headers: auth, body: '{"model": "nope", "messages": [{"role": "user", "content": "hi"}]}', status: 404 },
  { what: "a chat completion with a wrong field", method: "POST", path: "/v1/chat/completions", headers: auth, body: '{"model": "tiny_gpt", "messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}', status: 400 },
  { what: "a chat completion without a key", method: "POST", path: "/v1/chat/completions", body: "{}", status: 401 },
  { what: "a completion over --max-input-size", method: "POST", path: "/v1/completions", headers: auth, body: "x".repeat(5000), status: 413 },
  { what: "an embedding of an unknown model", method: "POST", path: "/v1/embeddings", headers: auth, body: '{"model": "nope", "input": "hi"}', status: 404 },
  { what: "a generate call to an unknown model", method: "POST", path: "/v2/models/nope/generate", headers: auth, body: '{"text_input": "hi"}', status: 404 },
  { what: "a generate_stream call without a key", method: "POST", path: "/v2/models/tiny_gpt/generate_stream", body: "{}", status: 401 },
  // Every other route of the table too: metadata, configuration, readiness, the repository API.
  { what: "server metadata", method: "GET", path: "/v2", headers: auth, status: 200 },
  { what: "model metadata", method: "GET", path: "/v2/models/simple", headers: auth, status: 200 },
  { what: "a version's configuration", method: "GET", path: "/v2/models/simple/versions/1/config", headers: auth, status: 200 },
  { what: "model readiness", method: "GET", path: "/v2/models/simple/ready", headers: auth, status: 200 },
  { what: "metadata of an unknown function", method: "GET", path: "/v2/models/nope", headers: auth, status: 404 },
  { what: "metadata without a key", method: "GET", path: "/v2/models/simple", status: 401 },
  { what: "the functions' list", method: "GET", path: "/v1/functions", headers: auth, status: 200 },
  { what: "OpenAI's model list", method: "GET", path: "/v1/models", headers: auth, status: 200 },
  { what: "OpenAI's model list without a key", method: "GET", path: "/v1/models", status: 401 },
  // A control route answers a loopback Host only (the web Request the app gets carries none of its own).
  { what: "the repository index", method: "POST", path: "/v2/repository/index", headers: { host: "127.0.0.1", "content-type": "application/json" }, body: "{}", status: 200 },
  { what: "a load the control mode refuses", method: "POST", path: "/v2/repository/models/simple/load", headers: { host: "127.0.0.1", "content-type": "application/json" }, body: "{}", status: 400 },
  { what: "a control route from another Host", method: "POST", path: "/v2/repository/index", headers: { host: "evil.example", "content-type": "application/json" }, body: "{}", status: 403 },
  // What the router answers itself.
  { what: "a path no route has", method: "GET", path: "/v2/nothing", headers: auth, status: 404 },
  { what: "a path without a key (refused before its 404)", method: "GET", path: "/v2/nothing", status: 401 },
  { what: "a route's path with the wrong method", method: "GET", path: "/v2/models/simple/infer", headers: auth, status: 405 },
  { what: "a percent-encoded name", method: "POST", path: "/v2/models/sim%70le/infer", headers: auth, body: json, status: 200 },
  { what: "a name that decodes out of its folder", method: "GET", path: "/v2/models/..%2F..%2Fetc", headers: auth, status: 404 },
  { what: "OPTIONS without --cors-origin", method: "OPTIONS", path: "/v2/models/simple/infer", status: 405 },
];

const COMPARED = ["content-type", "inference-header-content-length", "www-authenticate", "connection", "content-encoding", "allow"];

function picked(headers: Record<string, string | string[] | undefined> | Headers): Record<string, string | undefined> {
  const get = (name: string) => (headers instanceof Headers ? (headers.get(name) ?? undefined) : (headers[name] as string | undefined));
  const out: Record<string, string | undefined> = {};
  // Node answers keep-alive requests with an explicit `Connection: keep-alive`; only `close` matters.
  for (const name of COMPARED) out[name] = name === "connection" && get(name) !== "close" ? undefined : get(name);
  return out;
}

describe("Node's listener and the web fetch path answer alike", () => {
  it.each(cases)("$what ($status)", async (c) => {
    const node = await pool.request({ method: c.method, path: c.path, headers: c.headers, body: c.body });
    const nodeBody = new Uint8Array(await node.body.arrayBuffer());
    const request = new Request(`${server.url}${c.path}`, { method: c.method, headers: c.headers, body: c.body as BodyInit | undefined });
    const web = await server.runtime!.fetch(request);
    const webBody = new Uint8Array(await web.arrayBuffer());
    expect(node.statusCode).toBe(c.status);
    expect(web.status).toBe(c.status);
    expect(picked(node.headers)).toEqual(picked(web.headers));
    expect(Buffer.from(nodeBody).toString("latin1")).toEqual(Buffer.from(webBody).toString("latin1"));
  });

  it("answers HEAD as its GET without the body, both ways, with the GET's length", async () => {
    const get = await pool.request({ method: "GET", path: "/v2/models/simple", headers: auth });
    const length = String((await get.body.arrayBuffer()).byteLength);
    const head = await pool.request({ method: "HEAD", path: "/v2/models/simple", headers: auth });
    expect([head.statusCode, head.headers["content-type"], head.headers["content-length"], await head.body.text()]).toEqual([200, "application/json", length, ""]);
    const web = await server.runtime!.fetch(new Request(`${server.url}/v2/models/simple`, { method: "HEAD", headers: auth }));
    expect([web.status, web.headers.get("content-length"), await web.text()]).toEqual([200, length, ""]);
  });

  it("compresses when asked", async () => {
    const lane = await pool.request({ method: "POST", path: "/v2/models/simple/infer", headers: { ...auth, "accept-encoding": "gzip" }, body: json });
    expect(lane.statusCode).toBe(200);
    expect(lane.headers["content-encoding"]).toBe("gzip");
    expect(lane.headers.vary).toBe("Accept-Encoding");
    const { gunzipSync } = await import("node:zlib");
    const answer = JSON.parse(gunzipSync(Buffer.from(await lane.body.arrayBuffer())).toString()) as { outputs: { name: string; data: number[] }[] };
    expect(answer.outputs.find((o) => o.name === "OUTPUT0")!.data).toEqual(ints.map((i) => i + 2));
  });

  it("streams a chat completion alike both ways: the same events, sent chunked as they are made, never compressed", async () => {
    const body = JSON.stringify({ model: "tiny_gpt", messages: [{ role: "user", content: "Hello" }], max_tokens: 8, temperature: 0, stream: true });
    const headers = { ...auth, "content-type": "application/json", "accept-encoding": "gzip" };
    const lane = await pool.request({ method: "POST", path: "/v1/chat/completions", headers, body });
    const laneText = await lane.body.text();
    const app = await server.runtime!.fetch(new Request(`${server.url}/v1/chat/completions`, { method: "POST", headers, body }));
    const appText = await app.text();
    expect(lane.statusCode).toBe(200);
    expect(lane.headers["content-type"]).toBe(app.headers.get("content-type"));
    expect(lane.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(lane.headers["transfer-encoding"]).toBe("chunked");
    expect(lane.headers["content-encoding"]).toBeUndefined();
    // Each completion has its own id and time: compare what the model said, event by event.
    const said = (text: string) => text.split("\n\n").filter(Boolean).map((e) => (e === "data: [DONE]" ? e : JSON.parse(e.slice(6)).choices.map((c: { delta: unknown; finish_reason: unknown }) => [c.delta, c.finish_reason])));
    expect(said(laneText).length).toBeGreaterThan(2);
    expect(said(laneText)).toEqual(said(appText));
  });

  it("keeps serving on the same connection after a refusal decided before the body was read", async () => {
    const one = new Pool(server.url, { connections: 1 });
    try {
      const refused = await one.request({ method: "POST", path: "/v2/models/nope/infer", headers: auth, body: json });
      expect(refused.statusCode).toBe(404);
      await refused.body.arrayBuffer();
      const served = await one.request({ method: "POST", path: "/v2/models/simple/infer", headers: auth, body: json });
      expect(served.statusCode).toBe(200);
      await served.body.arrayBuffer();
    } finally {
      await one.close();
    }
  });
});
