import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";

// Triton's generate extension (POST …/generate and …/generate_stream) through the real server and
// ONNX Runtime: flat JSON fields name the inputs, each response is a flat JSON object, and the
// stream is Server-Sent Events with no closing sentinel.
let server: TestServer;
let pool: Pool;
beforeAll(async () => {
  server = await startServer({ controlMode: "none" });
  pool = new Pool(server.url, { connections: 2 });
});
afterAll(async () => {
  await pool?.close();
  await server?.close();
});

const ints = Array.from({ length: 16 }, (_, i) => i);

async function post(path: string, body: unknown) {
  const res = await pool.request({ method: "POST", path, headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: res.statusCode, type: String(res.headers["content-type"]), text: await res.body.text() };
}

/** The `data:` events of an SSE body, parsed. */
function events(text: string): unknown[] {
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .split("\n\n")
    .filter((e) => e.length > 0)
    .map((e) => {
      expect(e.startsWith("data: ")).toBe(true);
      return JSON.parse(e.slice("data: ".length));
    });
}

describe("generate extension", () => {
  it("generate: inputs by name, outputs by name, the batch dimension added for a batching function", async () => {
    const res = await post("/v2/models/simple/generate", { id: "g1", INPUT0: ints, INPUT1: ints.map(() => 2) });
    expect(res.status).toBe(200);
    expect(res.type).toContain("application/json");
    expect(JSON.parse(res.text)).toEqual({ id: "g1", model_name: "simple", model_version: "1", OUTPUT0: ints.map((i) => i + 2), OUTPUT1: ints.map((i) => i - 2) });
  });

  it("generate with a version and strings for a BYTES model", async () => {
    const res = await post("/v2/models/simple_string/versions/1/generate", { INPUT0: ints.map(String), INPUT1: ints.map(() => "1") });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).OUTPUT0).toEqual(ints.map((i) => String(i + 1)));
  });

  it("generate_stream: one SSE event for a one-shot function, then the stream ends", async () => {
    const res = await post("/v2/models/simple/generate_stream", { INPUT0: ints, INPUT1: ints, parameters: { note: "x" } });
    expect(res.status).toBe(200);
    expect(res.type).toBe("text/event-stream; charset=utf-8");
    expect(events(res.text)).toEqual([{ model_name: "simple", model_version: "1", OUTPUT0: ints.map((i) => 2 * i), OUTPUT1: ints.map(() => 0) }]);
  });

  it("refuses before inference with an ordinary error reply naming the field, on both routes", async () => {
    for (const route of ["generate", "generate_stream"]) {
      const missing = await post(`/v2/models/simple/${route}`, { INPUT0: ints });
      expect(missing.status).toBe(400);
      expect(missing.type).toContain("application/json");
      expect(JSON.parse(missing.text).error).toMatch(/INPUT1/);
      const shape = await post(`/v2/models/simple/${route}`, { INPUT0: [1, 2], INPUT1: ints });
      expect(shape.status).toBe(400);
      expect(JSON.parse(shape.text).error).toMatch(/INPUT0/);
      const ragged = await post(`/v2/models/simple/${route}`, { INPUT0: [[1], [1, 2]], INPUT1: ints });
      expect(JSON.parse(ragged.text).error).toMatch(/'INPUT0' is a ragged array/);
      const object = await post(`/v2/models/simple/${route}`, { INPUT0: ints, INPUT1: ints, extra: { a: 1 } });
      expect(object.status).toBe(400);
      expect(JSON.parse(object.text).error).toMatch(/'extra' is not an input of 'simple'/);
      expect((await post(`/v2/models/simple/${route}`, "not json")).status).toBe(400);
      expect((await post(`/v2/models/simple/${route}`, "[1]")).status).toBe(400);
      expect((await post(`/v2/models/nope/${route}`, { INPUT0: ints })).status).toBe(404);
      // More elements than --max-elements: 413 from the count, before anything is copied.
      const huge = await post(`/v2/models/simple/${route}`, `{"INPUT0": [${"0,".repeat(17_000_000)}0], "INPUT1": []}`);
      expect(huge.status).toBe(413);
      expect(JSON.parse(huge.text).error).toMatch(/INPUT0/);
    }
  });

  it("GET on a generate route is a 405, as for every known path", async () => {
    const res = await pool.request({ method: "GET", path: "/v2/models/simple/generate" });
    expect(res.statusCode).toBe(405);
    await res.body.dump();
  });
});
