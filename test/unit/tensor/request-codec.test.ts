import { describe, expect, it } from "vitest";
import { decodeInferRequest, decodeRawBinaryRequest } from "../../../runtime/tensor/mod.ts";
import { binaryBody, bytesOf, expectInvalid, jsonBody } from "./_helpers.ts";

const utf8 = new TextEncoder();

function json(inputs: unknown[], extra: Record<string, unknown> = {}) {
  return decodeInferRequest(jsonBody({ ...extra, inputs }));
}

describe("decodeInferRequest() JSON", () => {
  it("`decodeInferRequest()` reads nested and flat data row-major alike", () => {
    const nested = json([{ name: "A", datatype: "INT32", shape: [2, 3], data: [[1, 2, 3], [4, 5, 6]] }]);
    const flat = json([{ name: "A", datatype: "INT32", shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }]);
    expect(nested.inputs[0]!.tensor.data).toEqual(Int32Array.of(1, 2, 3, 4, 5, 6));
    expect(flat.inputs[0]!.tensor.data).toEqual(nested.inputs[0]!.tensor.data);
    const deep = json([{ name: "A", datatype: "FP32", shape: [1, 2, 2], data: [[[1, 2], [3, 4]]] }]);
    expect(deep.inputs[0]!.tensor.data).toEqual(Float32Array.of(1, 2, 3, 4));
  });

  it("`decodeInferRequest()` keeps INT64 and UINT64 beyond 2^53 exact", () => {
    const text =
      '{"inputs":[{"name":"F","datatype":"FP64","shape":[1],"data":[1e300]},' +
      '{"name":"I","datatype":"INT64","shape":[3],"data":[9007199254740993,-9223372036854775808,1]},' +
      '{"name":"U","datatype":"UINT64","shape":[1,1],"data":[[18446744073709551615]]}]}';
    const request = decodeInferRequest(utf8.encode(text));
    expect(request.inputs[0]!.tensor.data).toEqual(Float64Array.of(1e300));
    expect(request.inputs[1]!.tensor.data).toEqual(BigInt64Array.of(9007199254740993n, -9223372036854775808n, 1n));
    expect(request.inputs[2]!.tensor.data).toEqual(BigUint64Array.of(18446744073709551615n));
  });

  it("`decodeInferRequest()` stores BYTES strings as UTF-8", () => {
    const r = json([{ name: "S", datatype: "BYTES", shape: [2], data: ["é", "\u0000"] }]);
    expect(r.inputs[0]!.tensor.data).toEqual([Uint8Array.of(0xc3, 0xa9), Uint8Array.of(0)]);
  });

  it("`decodeInferRequest()` echoes id and parameters and drops transport keys from tensor parameters", () => {
    const r = json([{ name: "A", datatype: "INT8", shape: [1], data: [1], parameters: { note: "x" } }], {
      id: "42",
      parameters: { priority: 1, binary_data_output: true },
    });
    expect(r.id).toBe("42");
    expect(r.parameters).toEqual({ priority: 1, binary_data_output: true });
    expect(r.inputs[0]!.parameters).toEqual({ note: "x" });
    expect(r.outputs).toBeUndefined();
  });

  it("`decodeInferRequest()` resolves per-output binary_data over binary_data_output, in request order", () => {
    const r = json([{ name: "A", datatype: "INT8", shape: [1], data: [1] }], {
      parameters: { binary_data_output: true },
      outputs: [{ name: "Y", parameters: { binary_data: false } }, { name: "X" }, { name: "Z", parameters: { k: 1 } }],
    });
    expect(r.outputs).toEqual([
      { name: "Y", binary: false },
      { name: "X", binary: true },
      { name: "Z", binary: true, parameters: { k: 1 } },
    ]);
    const plain = json([{ name: "A", datatype: "INT8", shape: [1], data: [1] }], {
      outputs: [{ name: "X" }, { name: "Y", parameters: { binary_data: true } }],
    });
    expect(plain.outputs).toEqual([{ name: "X", binary: false }, { name: "Y", binary: true }]);
  });

  it("`decodeInferRequest()` treats an empty outputs array as all outputs", () => {
    expect(json([{ name: "A", datatype: "INT8", shape: [1], data: [1] }], { outputs: [] }).outputs).toBeUndefined();
  });
});

describe("decodeInferRequest() binary extension", () => {
  it("`decodeInferRequest()` reads the PROTOCOL §1.6 layout: 210 bytes of JSON then 16 + 3 bytes", () => {
    const header = {
      inputs: [
        { name: "input0", shape: [2, 2], datatype: "UINT32", parameters: { binary_data_size: 16 } },
        { name: "input1", shape: [3], datatype: "BOOL", parameters: { binary_data_size: 3 } },
      ],
    };
    const text = JSON.stringify(header);
    const padded = text + " ".repeat(210 - text.length);
    const body = new Uint8Array(229);
    body.set(utf8.encode(padded));
    body.set(bytesOf(Uint32Array.of(1, 2, 3, 0xffffffff)), 210);
    body.set([1, 0, 1], 226);
    const r = decodeInferRequest(body, { headerLength: 210 });
    expect(r.inputs.map((i) => i.name)).toEqual(["input0", "input1"]);
    expect(r.inputs[0]!.tensor.data).toEqual(Uint32Array.of(1, 2, 3, 0xffffffff));
    expect(r.inputs[1]!.tensor.data).toEqual(Uint8Array.of(1, 0, 1));
  });

  it("`decodeInferRequest()` reads the §1.6 BYTES example of 13 bytes as ['ab', 'xyz']", () => {
    const section = Uint8Array.of(0x02, 0, 0, 0, 0x61, 0x62, 0x03, 0, 0, 0, 0x78, 0x79, 0x7a);
    const { body, headerLength } = binaryBody(
      { inputs: [{ name: "S", datatype: "BYTES", shape: [2], parameters: { binary_data_size: 13 } }] },
      [section],
    );
    const r = decodeInferRequest(body, { headerLength });
    expect(r.inputs[0]!.tensor.data).toEqual([utf8.encode("ab"), utf8.encode("xyz")]);
  });

  it("`decodeInferRequest()` mixes JSON and binary inputs, binary sections in input order", () => {
    const { body, headerLength } = binaryBody(
      {
        inputs: [
          { name: "A", datatype: "FP32", shape: [2], parameters: { binary_data_size: 8 } },
          { name: "B", datatype: "INT32", shape: [1], data: [7] },
          { name: "C", datatype: "INT16", shape: [1], parameters: { binary_data_size: 2 } },
        ],
      },
      [bytesOf(Float32Array.of(1.5, -2)), bytesOf(Int16Array.of(-3))],
    );
    const r = decodeInferRequest(body, { headerLength });
    expect(r.inputs.map((i) => i.tensor.data)).toEqual([Float32Array.of(1.5, -2), Int32Array.of(7), Int16Array.of(-3)]);
  });

  it("`decodeInferRequest()` copies unaligned binary data into an aligned array", () => {
    const { body, headerLength } = binaryBody(
      {
        inputs: [
          { name: "B", datatype: "UINT8", shape: [1], parameters: { binary_data_size: 1 } },
          { name: "F", datatype: "FP64", shape: [2], parameters: { binary_data_size: 16 } },
        ],
      },
      [Uint8Array.of(9), bytesOf(Float64Array.of(Math.PI, -0))],
    );
    const r = decodeInferRequest(body, { headerLength });
    expect(r.inputs[1]!.tensor.data).toEqual(Float64Array.of(Math.PI, -0));
  });
});

describe("decodeRawBinaryRequest()", () => {
  it("`decodeRawBinaryRequest()` fills the single input, infers the variable dimension, asks for binary outputs", () => {
    const body = bytesOf(Float32Array.of(1, 2, 3, 4, 5, 6));
    const r = decodeRawBinaryRequest(body, { name: "X", datatype: "FP32", shape: [1, -1, 3] });
    expect(r.parameters).toEqual({ binary_data_output: true });
    expect(r.outputs).toBeUndefined();
    expect(r.inputs[0]!.tensor.shape).toEqual([1, 2, 3]);
    expect(r.inputs[0]!.tensor.data).toEqual(Float32Array.of(1, 2, 3, 4, 5, 6));
  });

  it("`decodeRawBinaryRequest()` takes a BYTES body as one element without a length prefix", () => {
    const r = decodeRawBinaryRequest(Uint8Array.of(0xff, 0, 1), { name: "S", datatype: "BYTES", shape: [-1] });
    expect(r.inputs[0]!.tensor).toEqual({ datatype: "BYTES", shape: [1], data: [Uint8Array.of(0xff, 0, 1)] });
  });

  it("`decodeRawBinaryRequest()` rejects a body that does not fill the shape, naming the input", () => {
    expectInvalid(
      () => decodeRawBinaryRequest(new Uint8Array(10), { name: "X", datatype: "FP32", shape: [1, -1, 3] }),
      "'X'",
      "10 bytes",
    );
    expectInvalid(() => decodeRawBinaryRequest(new Uint8Array(8), { name: "X", datatype: "FP32", shape: [3] }), "'X'");
    expectInvalid(() => decodeRawBinaryRequest(new Uint8Array(8), { name: "X", datatype: "FP32", shape: [-1, -1] }), "'X'");
    expectInvalid(() => decodeRawBinaryRequest(new Uint8Array(8), { name: "S", datatype: "BYTES", shape: [2] }), "'S'");
  });
});
