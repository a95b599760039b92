import { describe, it } from "vitest";
import { decodeInferRequest } from "../../../runtime/tensor/mod.ts";
import { binaryBody, bytesOf, expectInvalid, jsonBody } from "./_helpers.ts";

const utf8 = new TextEncoder();

function decodeJson(inputs: unknown[], extra: Record<string, unknown> = {}) {
  return () => decodeInferRequest(jsonBody({ ...extra, inputs }));
}

function decodeBinary(inputs: unknown[], sections: Uint8Array[]) {
  const { body, headerLength } = binaryBody({ inputs }, sections);
  return () => decodeInferRequest(body, { headerLength });
}

describe("decodeInferRequest() rejects malformed JSON inputs", () => {
  it("`decodeInferRequest()` rejects the wrong element count, naming the input and shape", () => {
    expectInvalid(
      decodeJson([{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: new Array(15).fill(0) }]),
      "input 'INPUT0': expected 16 elements for shape [1,16], got 15",
    );
  });

  it("`decodeInferRequest()` rejects JSON elements of the wrong type, naming the input and index", () => {
    const cases: [string, unknown[]][] = [
      ["INT32", [1, 1.5]],
      ["INT32", [1, "3"]],
      ["UINT8", [1, null]],
      ["INT64", [1, true]],
      ["FP32", [1, "1.0"]],
      ["FP64", [1, null]],
      ["BOOL", [true, 1]],
      ["BYTES", ["a", 5]],
      ["INT16", [1, {}]],
    ];
    for (const [datatype, data] of cases) {
      expectInvalid(decodeJson([{ name: "IN", datatype, shape: [2], data }]), "input 'IN'", "element 1");
    }
  });

  it("`decodeInferRequest()` rejects out-of-range integers, naming the input, index and value", () => {
    const cases: [string, unknown][] = [
      ["UINT8", 256],
      ["UINT8", -1],
      ["INT8", -129],
      ["UINT16", 65536],
      ["INT16", 32768],
      ["UINT32", 4294967296],
      ["INT32", 2147483648],
      ["UINT64", -1],
      ["UINT64", 18446744073709551616n],
      ["INT64", 9223372036854775808n],
      ["INT64", -9223372036854775809n],
    ];
    for (const [datatype, value] of cases) {
      expectInvalid(decodeJson([{ name: "IN", datatype, shape: [2], data: [0, value] }]), "input 'IN'", "element 1", String(value));
    }
  });

  it("`decodeInferRequest()` rejects an INT64 written as a float literal beyond 2^53", () => {
    const text = '{"inputs":[{"name":"IN","datatype":"INT64","shape":[1],"data":[1e20]}]}';
    expectInvalid(() => decodeInferRequest(utf8.encode(text)), "input 'IN'", "element 0");
  });

  it("`decodeInferRequest()` rejects an FP32 value beyond the FP32 range", () => {
    expectInvalid(decodeJson([{ name: "IN", datatype: "FP32", shape: [1], data: [1e39] }]), "input 'IN'", "FP32");
  });

  it("`decodeInferRequest()` rejects FP16 and BF16 in JSON with Triton's wording", () => {
    for (const datatype of ["FP16", "BF16"]) {
      expectInvalid(
        decodeJson([{ name: "H", datatype, shape: [1], data: [1] }]),
        "input 'H'",
        `receiving ${datatype} data via JSON is not supported`,
      );
    }
  });

  it("`decodeInferRequest()` rejects an unknown datatype, naming the input and value", () => {
    expectInvalid(decodeJson([{ name: "IN", datatype: "FP8", shape: [1], data: [1] }]), "input 'IN'", '"FP8"');
  });

  it("`decodeInferRequest()` rejects a negative or fractional shape dimension", () => {
    expectInvalid(decodeJson([{ name: "IN", datatype: "FP32", shape: [2, -1], data: [1] }]), "input 'IN'", "-1");
    expectInvalid(decodeJson([{ name: "IN", datatype: "FP32", shape: [1.5], data: [1] }]), "input 'IN'", "1.5");
    expectInvalid(decodeJson([{ name: "IN", datatype: "FP32", shape: "2", data: [1] }]), "input 'IN'", "shape");
  });

  it("`decodeInferRequest()` rejects an input with neither data nor binary_data_size", () => {
    expectInvalid(decodeJson([{ name: "IN", datatype: "FP32", shape: [1] }]), "input 'IN'", "neither");
  });

  it("`decodeInferRequest()` rejects an input with both data and binary_data_size", () => {
    const { body, headerLength } = binaryBody(
      { inputs: [{ name: "IN", datatype: "FP32", shape: [1], data: [1], parameters: { binary_data_size: 4 } }] },
      [new Uint8Array(4)],
    );
    expectInvalid(() => decodeInferRequest(body, { headerLength }), "input 'IN'", "both");
  });

  it("`decodeInferRequest()` rejects duplicate input names", () => {
    const a = { name: "IN", datatype: "INT8", shape: [1], data: [1] };
    expectInvalid(decodeJson([a, a]), "input 'IN'", "more than once");
  });

  it("`decodeInferRequest()` rejects a bad request shape: no inputs, bad id, bad parameters, bad outputs", () => {
    const ok = { name: "IN", datatype: "INT8", shape: [1], data: [1] };
    expectInvalid(decodeJson([]), "inputs");
    expectInvalid(() => decodeInferRequest(jsonBody({})), "inputs");
    expectInvalid(() => decodeInferRequest(jsonBody([ok])), "JSON object");
    expectInvalid(decodeJson([{ datatype: "INT8", shape: [1], data: [1] }]), "inputs[0].name");
    expectInvalid(decodeJson([ok], { id: 42 }), "id", "42");
    expectInvalid(decodeJson([ok], { parameters: { p: { x: 1 } } }), "parameter 'p'");
    expectInvalid(decodeJson([ok], { parameters: { binary_data_output: "yes" } }), "binary_data_output");
    expectInvalid(decodeJson([{ ...ok, parameters: [] }]), "input 'IN' parameters");
    expectInvalid(decodeJson([ok], { outputs: {} }), "outputs");
    expectInvalid(decodeJson([ok], { outputs: [{ name: "O", parameters: { binary_data: 1 } }] }), "output 'O'", "binary_data");
    expectInvalid(decodeJson([ok], { outputs: [{ name: "O" }, { name: "O" }] }), "output 'O'", "more than once");
    expectInvalid(decodeJson([{ ...ok, data: 1 }]), "input 'IN'", "array");
  });

  it("`decodeInferRequest()` rejects malformed JSON and non-UTF-8 text", () => {
    expectInvalid(() => decodeInferRequest(utf8.encode('{"inputs": [')), "malformed JSON in request body");
    expectInvalid(() => decodeInferRequest(Uint8Array.of(0x7b, 0xff, 0x7d)), "malformed JSON in request body");
  });

  it("`decodeInferRequest()` rejects binary_data_size without a binary part", () => {
    expectInvalid(
      decodeJson([{ name: "IN", datatype: "FP32", shape: [1], parameters: { binary_data_size: 4 } }]),
      "input 'IN'",
      "Inference-Header-Content-Length",
    );
  });
});

describe("decodeInferRequest() rejects malformed binary sections", () => {
  it("`decodeInferRequest()` rejects a binary_data_size that disagrees with the shape", () => {
    expectInvalid(
      decodeBinary([{ name: "IN", datatype: "UINT32", shape: [2, 2], parameters: { binary_data_size: 15 } }], [new Uint8Array(15)]),
      "input 'IN'",
      "expected 16 bytes",
      "got 15",
    );
  });

  it("`decodeInferRequest()` rejects a binary_data_size that runs past the end of the body", () => {
    expectInvalid(
      decodeBinary([{ name: "IN", datatype: "UINT32", shape: [4], parameters: { binary_data_size: 16 } }], [new Uint8Array(12)]),
      "input 'IN'",
      "binary data size mismatch",
    );
  });

  it("`decodeInferRequest()` rejects trailing bytes after the binary sections, naming the inputs", () => {
    expectInvalid(
      decodeBinary([{ name: "IN", datatype: "UINT8", shape: [4], parameters: { binary_data_size: 4 } }], [new Uint8Array(6)]),
      "binary data size mismatch",
      "'IN'",
      "4 bytes",
      "6 bytes",
    );
  });

  it("`decodeInferRequest()` rejects a header length larger than the body", () => {
    const body = jsonBody({ inputs: [{ name: "IN", datatype: "INT8", shape: [1], data: [1] }] });
    expectInvalid(() => decodeInferRequest(body, { headerLength: body.byteLength + 1 }), "Inference-Header-Content-Length", "larger");
    expectInvalid(() => decodeInferRequest(body, { headerLength: -3 }), "Inference-Header-Content-Length");
  });

  it("`decodeInferRequest()` rejects BOOL bytes other than 0 and 1", () => {
    expectInvalid(
      decodeBinary([{ name: "B", datatype: "BOOL", shape: [2], parameters: { binary_data_size: 2 } }], [Uint8Array.of(1, 2)]),
      "input 'B'",
      "element 1",
    );
  });

  it("`decodeInferRequest()` rejects a BYTES prefix that is truncated", () => {
    expectInvalid(
      decodeBinary([{ name: "S", datatype: "BYTES", shape: [2], parameters: { binary_data_size: 7 } }], [Uint8Array.of(1, 0, 0, 0, 0x61, 0, 0)]),
      "input 'S'",
      "truncated length prefix",
    );
  });

  it("`decodeInferRequest()` rejects a BYTES prefix that runs past the end", () => {
    expectInvalid(
      decodeBinary([{ name: "S", datatype: "BYTES", shape: [1], parameters: { binary_data_size: 6 } }], [Uint8Array.of(5, 0, 0, 0, 0x61, 0x62)]),
      "input 'S'",
      "runs past the end",
    );
  });

  it("`decodeInferRequest()` rejects a BYTES element count that differs from the shape", () => {
    const two = Uint8Array.of(1, 0, 0, 0, 0x61, 1, 0, 0, 0, 0x62);
    expectInvalid(
      decodeBinary([{ name: "S", datatype: "BYTES", shape: [3], parameters: { binary_data_size: 10 } }], [two]),
      "input 'S'",
      "expected 3 BYTES elements",
      "got 2",
    );
    expectInvalid(
      decodeBinary([{ name: "S", datatype: "BYTES", shape: [1], parameters: { binary_data_size: 10 } }], [two]),
      "input 'S'",
      "left after the 1 elements",
    );
  });

  it("`decodeInferRequest()` rejects a binary_data_size that is not a non-negative integer", () => {
    expectInvalid(
      decodeBinary([{ name: "IN", datatype: "UINT8", shape: [1], parameters: { binary_data_size: -1 } }], [bytesOf(Uint8Array.of(1))]),
      "input 'IN'",
      "binary_data_size",
    );
  });
});
