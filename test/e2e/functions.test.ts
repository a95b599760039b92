import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { mlpReference } from "../../models/mlp.ts";
import { mulberry32 } from "../../models/prng.ts";
import { drawText, ppocrClsPreprocess, rotate180, SAMPLE_TEXT } from "../../models/text-image.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function infer(model: string, body: unknown) {
  const res = await fetch(`${server.url}/v2/models/${model}/infer`, { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** A binary-extension request body: JSON header followed by the raw tensor bytes. */
function binaryBody(header: unknown, chunks: Uint8Array[]) {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const size = chunks.reduce((n, c) => n + c.length, json.length);
  const body = new Uint8Array(size);
  body.set(json);
  let offset = json.length;
  for (const c of chunks) {
    body.set(c, offset);
    offset += c.length;
  }
  return { body, headers: { "Inference-Header-Content-Length": String(json.length) } };
}

describe("simple_string (BYTES through an ONNX Cast)", () => {
  it("adds and subtracts decimal strings", async () => {
    const x = Array.from({ length: 16 }, (_, i) => String(i - 3));
    const y = Array.from({ length: 16 }, () => "-7");
    const { status, body } = await infer("simple_string", {
      inputs: [
        { name: "INPUT0", datatype: "BYTES", shape: [1, 16], data: x },
        { name: "INPUT1", datatype: "BYTES", shape: [1, 16], data: y },
      ],
    });
    expect(status).toBe(200);
    expect(body.outputs[0]).toMatchObject({ name: "OUTPUT0", datatype: "BYTES", data: x.map((v) => String(Number(v) - 7)) });
    expect(body.outputs[1].data).toEqual(x.map((v) => String(Number(v) + 7)));
  });

  it("refuses a string with a NUL byte instead of silently truncating it", async () => {
    const data = Array.from({ length: 16 }, () => "1");
    const { status, body } = await infer("simple_string", {
      inputs: [
        { name: "INPUT0", datatype: "BYTES", shape: [1, 16], data: ["1\u00002", ...data.slice(1)] },
        { name: "INPUT1", datatype: "BYTES", shape: [1, 16], data },
      ],
    });
    expect(status).toBe(400);
    expect(body.error).toMatch(/INPUT0.*NUL/);
  });

  it("answers 400, not 500, for a string the model cannot parse", async () => {
    const data = Array.from({ length: 16 }, () => "abc");
    const { status } = await infer("simple_string", {
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "BYTES", shape: [1, 16], data })),
    });
    expect(status).toBe(400);
  });
});

describe("simple_identity (built-in identity backend)", () => {
  it("returns arbitrary bytes (NUL and non-UTF-8 included) byte for byte over binary", async () => {
    const elements = [new Uint8Array([0, 1, 2, 0xff, 0xfe]), new Uint8Array([]), new TextEncoder().encode("héllo")];
    const encoded = elements.flatMap((e) => [...new Uint8Array(new Uint32Array([e.length]).buffer), ...e]);
    const { body, headers } = binaryBody(
      {
        inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 3], parameters: { binary_data_size: encoded.length } }],
        outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }],
      },
      [Uint8Array.from(encoded)],
    );
    const res = await fetch(`${server.url}/v2/models/simple_identity/infer`, { method: "POST", body, headers });
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const jsonLength = Number(res.headers.get("inference-header-content-length"));
    expect([...bytes.subarray(jsonLength)]).toEqual(encoded);
  });
});

describe("mlp", () => {
  it("matches the TypeScript reference for each row of a batch", async () => {
    const random = mulberry32(7);
    const input = Float32Array.from({ length: 3 * 512 }, () => random() * 2 - 1);
    const { status, body } = await infer("mlp", { inputs: [{ name: "input", datatype: "FP32", shape: [3, 512], data: [...input] }] });
    expect(status).toBe(200);
    const expected = mlpReference(input, 3);
    expect(body.outputs[0].shape).toEqual([3, 10]);
    expect(body.outputs[0].data).toHaveLength(expected.length);
    body.outputs[0].data.forEach((v: number, i: number) => expect(v).toBeCloseTo(expected[i]!, 5));
  });

  it("gives every concurrent request its own rows back (no cross-talk inside a batch)", async () => {
    const requests = Array.from({ length: 24 }, (_, r) => {
      const random = mulberry32(100 + r);
      return Float32Array.from({ length: 512 }, () => random() * 2 - 1);
    });
    const results = await Promise.all(
      requests.map((x) => infer("mlp", { inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: [...x] }] })),
    );
    expect(results).toHaveLength(24);
    results.forEach((result, r) => {
      const expected = mlpReference(requests[r]!, 1);
      expect(result.body.outputs[0].data).toHaveLength(10);
      result.body.outputs[0].data.forEach((v: number, i: number) => expect(v).toBeCloseTo(expected[i]!, 5));
    });
    const { model_stats } = await (await fetch(`${server.url}/v2/models/mlp/stats`)).json();
    const [stats] = model_stats;
    expect(stats.inference_count / stats.execution_count).toBeGreaterThan(1);
    expect(stats.batch_stats.some((b: { batch_size: number }) => b.batch_size > 1)).toBe(true);
  });
});

describe("ocr_cls (pretrained PP-OCR angle classifier)", () => {
  it("tells an upright text crop from one rotated by 180°", async () => {
    const upright = drawText(SAMPLE_TEXT);
    const rotated = rotate180(upright);
    const tensors = [upright, rotated].map((img) => ppocrClsPreprocess(img.data, img.width, img.height));
    const { body, headers } = binaryBody(
      {
        inputs: [{ name: "x", datatype: "FP32", shape: [2, 3, 48, 192], parameters: { binary_data_size: 2 * 3 * 48 * 192 * 4 } }],
      },
      tensors.map((t) => new Uint8Array(t.buffer, t.byteOffset, t.byteLength)),
    );
    const res = await fetch(`${server.url}/v2/models/ocr_cls/infer`, { method: "POST", body, headers });
    expect(res.status).toBe(200);
    const probs = (await res.json()).outputs[0].data;
    expect(probs[0]).toBeGreaterThan(0.9); // upright: class 0
    expect(probs[3]).toBeGreaterThan(0.9); // rotated: class 1
  });
});
