import { describe, expect, it } from "vitest";
import { decodeInferRequest, PARSE_WHOLE_UP_TO } from "../../../runtime/tensor/request-codec.ts";
import { checkElementBudget } from "../../../runtime/tensor/element-budget.ts";
import { binaryBody, jsonText } from "./_helpers.ts";

const utf8 = new TextEncoder();
const exhausted = (message: RegExp) => expect.objectContaining({ code: "RESOURCE_EXHAUSTED", message: expect.stringMatching(message) });

describe("checkElementBudget()", () => {
  it("weighs BYTES elements and nested arrays 8, numbers 1, and names the heaviest input", () => {
    const inputs = [
      { name: "n", datatype: "INT32" as const, elements: 100 },
      { name: "s", datatype: "BYTES" as const, elements: 100 },
    ];
    expect(() => checkElementBudget(inputs, 900)).not.toThrow();
    expect(() => checkElementBudget(inputs, 899)).toThrow(exhausted(/input 's' holds 100 BYTES elements, 900 weighted elements in all.*--max-elements/));
    expect(() => checkElementBudget([{ name: "x", datatype: "FP32", elements: 10, arrays: 10 }], 89)).toThrow(exhausted(/nested array counts 8/));
  });
});

describe("decodeInferRequest() applies the budget before decoding", () => {
  it("refuses a binary BYTES section by its shape before walking it", () => {
    // 8 bytes cannot hold a million elements: walking them would say so (400); the budget comes first.
    const header = { inputs: [{ name: "s", datatype: "BYTES", shape: [1_000_000], parameters: { binary_data_size: 8 } }] };
    const { body, headerLength } = binaryBody(header, [new Uint8Array(8)]);
    expect(() => decodeInferRequest(body, { headerLength, maxElements: 1000 })).toThrow(exhausted(/input 's' holds 1000000 BYTES/));
    expect(() => decodeInferRequest(body, { headerLength })).toThrow(expect.objectContaining({ code: "INVALID_ARG" }));
  });

  it("shares one empty view for every zero-length binary BYTES element", () => {
    const header = { inputs: [{ name: "s", datatype: "BYTES", shape: [3], parameters: { binary_data_size: 13 } }] };
    const { body, headerLength } = binaryBody(header, [Uint8Array.of(0, 0, 0, 0, 1, 0, 0, 0, 0x61, 0, 0, 0, 0)]);
    const data = decodeInferRequest(body, { headerLength }).inputs[0]!.tensor.data as Uint8Array[];
    expect(data.map((d) => [...d])).toEqual([[], [0x61], []]);
    expect(data[0]).toBe(data[2]);
  });

  it("weighs what a scanned header's data holds, not what its shape claims", () => {
    const id = "x".repeat(PARSE_WHOLE_UP_TO); // past the parse-whole size: the scanning path
    const lying = jsonText({ id, inputs: [{ name: "n", datatype: "INT64", shape: [1], data: Array(5000).fill(0) }] });
    expect(() => decodeInferRequest(utf8.encode(lying), { maxElements: 4999 })).toThrow(exhausted(/input 'n' holds 5000 INT64/));
    expect(() => decodeInferRequest(utf8.encode(lying))).toThrow("input 'n': expected 1 elements for shape [1], got 5000");
    const nested = jsonText({ id, inputs: [{ name: "n", datatype: "INT32", shape: [100], data: Array.from({ length: 100 }, () => [0]) }] });
    expect(() => decodeInferRequest(utf8.encode(nested), { maxElements: 899 })).toThrow(exhausted(/nested array/));
    expect(decodeInferRequest(utf8.encode(nested), { maxElements: 900 }).inputs[0]!.tensor.data).toHaveLength(100);
  });
});
