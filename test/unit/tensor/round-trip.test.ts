import { describe, expect, it } from "vitest";
import type { InferResponse } from "../../../runtime/core/inference.ts";
import type { DataType, TensorData } from "../../../runtime/core/tensor.ts";
import { decodeInferRequest, encodeInferResponse } from "../../../runtime/tensor/mod.ts";
import { binaryBody, bytesOf, jsonBody, parseHeader } from "./_helpers.ts";

const utf8 = new TextEncoder();

interface Case {
  datatype: DataType;
  shape: number[];
  /** JSON `data` values (flat); absent for the binary-only types. */
  json?: unknown[];
  data: TensorData;
}

const CASES: Case[] = [
  { datatype: "BOOL", shape: [3], json: [true, false, true], data: Uint8Array.of(1, 0, 1) },
  { datatype: "UINT8", shape: [3], json: [0, 255, 7], data: Uint8Array.of(0, 255, 7) },
  { datatype: "UINT16", shape: [3], json: [0, 65535, 300], data: Uint16Array.of(0, 65535, 300) },
  { datatype: "UINT32", shape: [3], json: [0, 4294967295, 70000], data: Uint32Array.of(0, 4294967295, 70000) },
  {
    datatype: "UINT64",
    shape: [2, 2],
    json: [0, 18446744073709551615n, 9007199254740993n, 42],
    data: BigUint64Array.of(0n, 18446744073709551615n, 9007199254740993n, 42n),
  },
  { datatype: "INT8", shape: [3], json: [-128, 127, 0], data: Int8Array.of(-128, 127, 0) },
  { datatype: "INT16", shape: [3], json: [-32768, 32767, -1], data: Int16Array.of(-32768, 32767, -1) },
  {
    datatype: "INT32",
    shape: [3],
    json: [-2147483648, 2147483647, 5],
    data: Int32Array.of(-2147483648, 2147483647, 5),
  },
  {
    datatype: "INT64",
    shape: [4],
    json: [-9223372036854775808n, 9223372036854775807n, 9007199254740993n, -9007199254740993n],
    data: BigInt64Array.of(-9223372036854775808n, 9223372036854775807n, 9007199254740993n, -9007199254740993n),
  },
  { datatype: "FP16", shape: [3], data: Uint16Array.of(0x3c00, 0xc000, 0x7c00) },
  {
    datatype: "FP32",
    shape: [1, 3],
    json: [0.5, -1.25, 3.4028234663852886e38],
    data: Float32Array.of(0.5, -1.25, 3.4028234663852886e38),
  },
  { datatype: "FP64", shape: [3], json: [0.1, -1e300, 5e-324], data: Float64Array.of(0.1, -1e300, 5e-324) },
  { datatype: "BF16", shape: [2], data: Uint16Array.of(0x3f80, 0xbf80) },
  {
    datatype: "BYTES",
    shape: [4],
    json: ["ab", "", "héllo ☃", "nul\u0000inside"],
    data: ["ab", "", "héllo ☃", "nul\u0000inside"].map((s) => utf8.encode(s)),
  },
];

/** Binary section of a case, written independently of the codec under test. */
function sectionOf(c: Case): Uint8Array {
  if (!Array.isArray(c.data)) return bytesOf(c.data);
  const parts: number[] = [];
  for (const el of c.data) {
    const n = el.byteLength;
    parts.push(n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24, ...el);
  }
  return Uint8Array.from(parts);
}

function respond(c: Case, data: TensorData): InferResponse {
  return { modelName: "m", modelVersion: "1", outputs: [{ name: "OUT", tensor: { datatype: c.datatype, shape: c.shape, data } }] };
}

describe("JSON round trip", () => {
  for (const c of CASES.filter((x) => x.json !== undefined)) {
    it(`\`decodeInferRequest()\` and \`encodeInferResponse()\` carry ${c.datatype} through JSON exactly`, () => {
      const request = decodeInferRequest(
        jsonBody({ inputs: [{ name: "IN", datatype: c.datatype, shape: c.shape, data: c.json }] }),
      );
      const tensor = request.inputs[0]!.tensor;
      expect(tensor.datatype).toBe(c.datatype);
      expect(tensor.shape).toEqual(c.shape);
      expect(tensor.data).toEqual(c.data);

      const { body, headerLength } = encodeInferResponse(respond(c, tensor.data), request);
      expect(headerLength).toBeUndefined();
      const out = parseHeader(body).outputs[0];
      expect(out).toEqual({ name: "OUT", datatype: c.datatype, shape: c.shape, data: c.json });
    });
  }
});

describe("binary round trip", () => {
  for (const c of CASES) {
    it(`\`decodeInferRequest()\` and \`encodeInferResponse()\` carry ${c.datatype} through binary byte-exact`, () => {
      const section = sectionOf(c);
      const { body, headerLength } = binaryBody(
        {
          inputs: [
            { name: "IN", datatype: c.datatype, shape: c.shape, parameters: { binary_data_size: section.byteLength } },
          ],
          outputs: [{ name: "OUT", parameters: { binary_data: true } }],
        },
        [section],
      );
      const request = decodeInferRequest(body, { headerLength });
      const tensor = request.inputs[0]!.tensor;
      expect(tensor.shape).toEqual(c.shape);
      expect(tensor.data).toEqual(c.data);
      expect(request.inputs[0]!.parameters).toBeUndefined();

      const encoded = encodeInferResponse(respond(c, tensor.data), request);
      expect(encoded.headerLength).toBeDefined();
      const header = parseHeader(encoded.body, encoded.headerLength);
      expect(header.outputs[0]).toEqual({
        name: "OUT",
        datatype: c.datatype,
        shape: c.shape,
        parameters: { binary_data_size: section.byteLength },
      });
      expect(encoded.body.subarray(encoded.headerLength)).toEqual(section);
    });
  }

  it("`decodeInferRequest()` keeps BYTES with NUL and non-UTF-8 bytes byte-exact", () => {
    const elements = [Uint8Array.of(0, 0x61, 0), Uint8Array.of(0xff, 0xfe, 0x80, 0xc3), new Uint8Array(0)];
    const c: Case = { datatype: "BYTES", shape: [3], data: elements };
    const section = sectionOf(c);
    const { body, headerLength } = binaryBody(
      { inputs: [{ name: "IN", datatype: "BYTES", shape: [3], parameters: { binary_data_size: section.byteLength } }] },
      [section],
    );
    const request = decodeInferRequest(body, { headerLength });
    expect(request.inputs[0]!.tensor.data).toEqual(elements);
    const encoded = encodeInferResponse(respond(c, request.inputs[0]!.tensor.data), {
      parameters: { binary_data_output: true },
      inputs: [],
    });
    expect(encoded.body.subarray(encoded.headerLength)).toEqual(section);
  });
});
