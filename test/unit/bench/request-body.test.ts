import { describe, expect, it } from "vitest";
import { buildRequest } from "../../../adapters/bench/request-body.ts";
import type { ModelMetadata, RequestBodyOptions } from "../../../adapters/bench/request-body.ts";

const metadata: ModelMetadata = {
  name: "m",
  inputs: [
    { name: "A", datatype: "INT32", shape: [-1, 2] },
    { name: "B", datatype: "BOOL", shape: [-1, 3] },
    { name: "S", datatype: "BYTES", shape: [-1, 2] },
  ],
};
const batching: RequestBodyOptions = { batching: true, batchSize: 1, binary: false, inputData: "random" };
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("buildRequest() with JSON tensors", () => {
  it("puts the batch size in the batch dimension and sends valid values for each datatype", () => {
    const request = buildRequest(metadata, { ...batching, batchSize: 3 });
    expect(request.headers).toEqual({ "content-type": "application/json" });
    const body = JSON.parse(text(request.body));
    expect(body.outputs).toBeUndefined();
    expect(body.inputs.map((i: { name: string; shape: number[]; datatype: string }) => [i.name, i.datatype, i.shape])).toEqual([
      ["A", "INT32", [3, 2]],
      ["B", "BOOL", [3, 3]],
      ["S", "BYTES", [3, 2]],
    ]);
    const [a, b, s] = body.inputs.map((i: { data: unknown[] }) => i.data);
    expect(a).toHaveLength(6);
    expect(a.every((v: unknown) => Number.isInteger(v))).toBe(true);
    expect(b.every((v: unknown) => typeof v === "boolean")).toBe(true);
    expect(s.every((v: unknown) => typeof v === "string" && /^\d{1,2}$/.test(v))).toBe(true);
  });

  it("is the same bytes for the same seed and different bytes for another", () => {
    const one = buildRequest(metadata, batching);
    expect(buildRequest(metadata, batching).body).toEqual(one.body);
    expect(buildRequest(metadata, { ...batching, seed: 2 }).body).not.toEqual(one.body);
  });

  it("sends zeros (and \"0\" strings) with inputData zero", () => {
    const body = JSON.parse(text(buildRequest(metadata, { ...batching, inputData: "zero" }).body));
    expect(body.inputs.map((i: { data: unknown[] }) => i.data)).toEqual([[0, 0], [false, false, false], ["0", "0"]]);
  });

  it("keeps the metadata shape for a model that does not batch", () => {
    const request = buildRequest({ name: "m", inputs: [{ name: "X", datatype: "FP32", shape: [4] }] }, { ...batching, batching: false });
    expect(request.inputs).toEqual([{ name: "X", datatype: "FP32", shape: [4] }]);
  });

  it("takes variable dimensions from --shape and refuses to guess them", () => {
    const variable: ModelMetadata = { name: "v", inputs: [{ name: "X", datatype: "FP32", shape: [-1, -1, 8] }] };
    expect(buildRequest(variable, { ...batching, batchSize: 2, shapes: { X: [5, 8] } }).inputs[0]!.shape).toEqual([2, 5, 8]);
    expect(() => buildRequest(variable, batching)).toThrow("input 'X' has variable dimensions (shape [-1,-1,8], batch dimension first); give them with --shape X:N,8");
    expect(() => buildRequest(variable, { ...batching, shapes: { X: [5, 9] } })).toThrow("--shape X:5,9 does not fit input 'X'");
    expect(() => buildRequest(variable, { ...batching, shapes: { Y: [1] } })).toThrow("--shape names 'Y', which is not an input of model 'v' (inputs: X)");
  });

  it("refuses FP16 as JSON, as Triton does, and asks for --binary", () => {
    const half: ModelMetadata = { name: "h", inputs: [{ name: "H", datatype: "FP16", shape: [-1, 2] }] };
    expect(() => buildRequest(half, batching)).toThrow("input 'H' is FP16, which cannot travel as JSON; add --binary");
  });
});

describe("buildRequest() with the binary tensor extension", () => {
  it("writes the JSON header, then each input's bytes in order (byte-exact)", () => {
    const request = buildRequest(metadata, { ...batching, binary: true, inputData: "zero" });
    const header =
      '{"inputs":[' +
      '{"name":"A","shape":[1,2],"datatype":"INT32","parameters":{"binary_data_size":8}},' +
      '{"name":"B","shape":[1,3],"datatype":"BOOL","parameters":{"binary_data_size":3}},' +
      '{"name":"S","shape":[1,2],"datatype":"BYTES","parameters":{"binary_data_size":10}}],' +
      '"parameters":{"binary_data_output":true}}';
    const tail = [0, 0, 0, 0, 0, 0, 0, 0, /* B */ 0, 0, 0, /* S: "0","0" */ 1, 0, 0, 0, 0x30, 1, 0, 0, 0, 0x30];
    expect(Array.from(request.body)).toEqual([...new TextEncoder().encode(header), ...tail]);
    expect(request.headers).toEqual({ "content-type": "application/octet-stream", "inference-header-content-length": String(header.length) });
  });

  it("carries the same values as the JSON form, little-endian", () => {
    const model: ModelMetadata = {
      name: "n",
      inputs: [
        { name: "I32", datatype: "INT32", shape: [-1, 3] },
        { name: "F32", datatype: "FP32", shape: [-1, 3] },
        { name: "I64", datatype: "INT64", shape: [-1, 2] },
        { name: "U16", datatype: "UINT16", shape: [-1, 2] },
        { name: "F64", datatype: "FP64", shape: [-1, 1] },
        { name: "B", datatype: "BOOL", shape: [-1, 4] },
        { name: "S", datatype: "BYTES", shape: [-1, 2] },
      ],
    };
    const json = JSON.parse(text(buildRequest(model, { ...batching, batchSize: 2 }).body));
    const binary = buildRequest(model, { ...batching, batchSize: 2, binary: true });
    const headerLength = Number(binary.headers["inference-header-content-length"]);
    const header = JSON.parse(text(binary.body.subarray(0, headerLength)));
    expect(header.inputs.map((i: { shape: number[] }) => i.shape)).toEqual(json.inputs.map((i: { shape: number[] }) => i.shape));
    const view = new DataView(binary.body.buffer, binary.body.byteOffset);
    let at = headerLength;
    const read: Record<string, (i: number) => unknown> = {
      INT32: (i) => view.getInt32(at + 4 * i, true),
      FP32: (i) => view.getFloat32(at + 4 * i, true),
      INT64: (i) => Number(view.getBigInt64(at + 8 * i, true)),
      UINT16: (i) => view.getUint16(at + 2 * i, true),
      FP64: (i) => view.getFloat64(at + 8 * i, true),
      BOOL: (i) => view.getUint8(at + i) === 1,
    };
    header.inputs.forEach((input: { datatype: string; parameters: { binary_data_size: number } }, k: number) => {
      const expected = json.inputs[k].data as unknown[];
      if (input.datatype === "BYTES") {
        const strings: string[] = [];
        for (let o = at; o < at + input.parameters.binary_data_size; ) {
          const n = view.getUint32(o, true);
          strings.push(text(binary.body.subarray(o + 4, o + 4 + n)));
          o += 4 + n;
        }
        expect(strings).toEqual(expected);
      } else {
        expect(expected.map((_, i) => read[input.datatype]!(i))).toEqual(expected);
      }
      at += input.parameters.binary_data_size;
    });
    expect(at).toBe(binary.body.length);
  });

  it("sends FP16 as two bytes per element holding finite values in [1/32, 1)", () => {
    const half: ModelMetadata = { name: "h", inputs: [{ name: "H", datatype: "FP16", shape: [-1, 64] }] };
    const request = buildRequest(half, { ...batching, binary: true });
    const headerLength = Number(request.headers["inference-header-content-length"]);
    expect(request.body.length - headerLength).toBe(128);
    const view = new DataView(request.body.buffer, request.body.byteOffset + headerLength);
    for (let i = 0; i < 64; i++) {
      const exponent = view.getUint16(2 * i, true) >> 10;
      expect(exponent === 0 || (exponent >= 10 && exponent <= 14)).toBe(true);
    }
  });
});
