import { describe, expect, it } from "vitest";
import { decodeInferRequest, decodeJsonData, encodeJsonData } from "../../../runtime/tensor/mod.ts";
import { expectInvalid } from "./_helpers.ts";

describe("JSON tensors", () => {
  it("`decodeJsonData()` takes bigint elements for INT64 and refuses rounded numbers beyond 2^53", () => {
    const target = { name: "I", datatype: "INT64", shape: [2] } as const;
    expect(decodeJsonData(target, [2n ** 60n, -5])).toEqual(BigInt64Array.of(2n ** 60n, -5n));
    expectInvalid(() => decodeJsonData(target, [1, 2 ** 60]), "input 'I'", "element 1", "2^53");
  });

  it("`decodeJsonData()` flattens mixed nesting row-major, as Triton does", () => {
    expect(decodeJsonData({ name: "A", datatype: "UINT8", shape: [2, 2] }, [[1, [2]], 3, [[4]]])).toEqual(
      Uint8Array.of(1, 2, 3, 4),
    );
  });

  it("`decodeInferRequest()` answers deeply nested data with INVALID_ARG, not a stack overflow", () => {
    const depth = 50_000;
    const text = `{"inputs":[{"name":"D","datatype":"INT64","shape":[1],"data":${"[".repeat(depth)}1${"]".repeat(depth)}}]}`;
    expect(decodeInferRequest(new TextEncoder().encode(text)).inputs[0]!.tensor.data).toEqual(BigInt64Array.of(1n));
    const big = text.replace("1]]", "9007199254740993]]");
    expect(decodeInferRequest(new TextEncoder().encode(big)).inputs[0]!.tensor.data).toEqual(
      BigInt64Array.of(9007199254740993n),
    );
    const two = text.replace("1]]", "1,2]]");
    expectInvalid(() => decodeInferRequest(new TextEncoder().encode(two)), "input 'D'", "expected 1 elements");
  });

  it("`encodeJsonData()` writes a flat array for any shape", () => {
    expect(encodeJsonData({ datatype: "INT16", shape: [2, 2], data: Int16Array.of(1, -2, 3, -4) }, { name: "O" })).toBe(
      "[1,-2,3,-4]",
    );
    expect(encodeJsonData({ datatype: "FP32", shape: [0], data: new Float32Array(0) }, { name: "O" })).toBe("[]");
    expect(encodeJsonData({ datatype: "BOOL", shape: [2], data: Uint8Array.of(0, 1) }, { name: "O" })).toBe("[false,true]");
  });
});
