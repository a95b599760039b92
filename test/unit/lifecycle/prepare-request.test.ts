import { describe, expect, it } from "vitest";
import { completeIdentityConfig } from "../../../runtime/config/mod.ts";
import type { InferRequest, Tensor } from "../../../runtime/core/mod.ts";
import { checkRequestHeader, collectOutputs, prepareRequest } from "../../../runtime/lifecycle/prepare-request.ts";
import { declared, yaml } from "../config/_helpers.ts";

const fixed = completeIdentityConfig(
  declared(yaml`
    backend: identity
    max_batch_size: 8
    input:
      - { name: A, data_type: TYPE_INT32, dims: [4] }
      - { name: B, data_type: TYPE_INT32, dims: [4], optional: true }
    output:
      - { name: A_OUT, data_type: TYPE_INT32, dims: [4] }
      - { name: B_OUT, data_type: TYPE_INT32, dims: [4] }
  `),
);
const variable = completeIdentityConfig(
  declared(yaml`
    backend: identity
    max_batch_size: 8
    input:
      - { name: A, data_type: TYPE_INT32, dims: [-1] }
    output:
      - { name: A_OUT, data_type: TYPE_INT32, dims: [-1] }
  `),
);

const int32 = (rows: number, width: number): Tensor => ({ datatype: "INT32", shape: [rows, width], data: new Int32Array(rows * width) });
const request = (inputs: Record<string, Tensor>, outputs?: string[]): InferRequest => ({
  inputs: Object.entries(inputs).map(([name, tensor]) => ({ name, tensor })),
  outputs: outputs?.map((name) => ({ name })),
  parameters: {},
});

describe("prepareRequest() batches together exactly the requests that can share an execution", () => {
  it("fixed dims: the same inputs in any order share a key; leaving out an optional input does not", () => {
    const both = prepareRequest(request({ A: int32(2, 4), B: int32(2, 4) }), fixed);
    const swapped = prepareRequest(request({ B: int32(3, 4), A: int32(3, 4) }), fixed);
    const onlyA = prepareRequest(request({ A: int32(1, 4) }), fixed);
    expect(both.shapeKey).toBe(swapped.shapeKey);
    expect(onlyA.shapeKey).not.toBe(both.shapeKey);
    expect(swapped.batchSize).toBe(3);
  });

  it("variable dims: requests share a key only when their shapes beyond the batch agree", () => {
    const four = prepareRequest(request({ A: int32(1, 4) }), variable);
    const fourAgain = prepareRequest(request({ A: int32(5, 4) }), variable);
    const five = prepareRequest(request({ A: int32(1, 5) }), variable);
    expect(four.shapeKey).toBe(fourAgain.shapeKey);
    expect(five.shapeKey).not.toBe(four.shapeKey);
  });
});

describe("checkRequestHeader() refuses what the config does not declare", () => {
  const header = (inputs: { name: string; shape: number[] }[], outputs?: string[]) => ({
    inputs: inputs.map((i) => ({ ...i, datatype: "INT32" as const })),
    outputs: outputs?.map((name) => ({ name })),
    parameters: {},
  });

  it("a missing required input, named, also when an optional one came twice", () => {
    expect(() => checkRequestHeader(header([{ name: "B", shape: [1, 4] }, { name: "B", shape: [1, 4] }]), fixed)).toThrow("missing required input(s) 'A'");
    expect(checkRequestHeader(header([{ name: "A", shape: [2, 4] }, { name: "A", shape: [2, 4] }]), fixed)).toBe(2);
  });

  it("the same over more inputs than a bit mask holds", () => {
    const many = completeIdentityConfig(
      declared(
        ["backend: identity", "input:", ...Array.from({ length: 40 }, (_, i) => `  - { name: I${i}, data_type: TYPE_INT32, dims: [1] }`), "output:", ...Array.from({ length: 40 }, (_, i) => `  - { name: O${i}, data_type: TYPE_INT32, dims: [1] }`)].join("\n"),
      ),
    );
    const all = Array.from({ length: 40 }, (_, i) => ({ name: `I${i}`, shape: [1] }));
    expect(checkRequestHeader(header(all), many)).toBe(1);
    expect(() => checkRequestHeader(header(all.filter((i) => i.name !== "I35")), many)).toThrow("missing required input(s) 'I35'");
  });

  it("an unknown input or output, a wrong shape", () => {
    expect(() => checkRequestHeader(header([{ name: "C", shape: [1, 4] }]), fixed)).toThrow("unexpected inference input 'C'");
    expect(() => checkRequestHeader(header([{ name: "A", shape: [1, 4] }], ["C_OUT"]), fixed)).toThrow("unexpected inference output 'C_OUT'");
    expect(() => checkRequestHeader(header([{ name: "A", shape: [1, 5] }]), fixed)).toThrow("Expected [-1,4], got [1,5]");
  });
});

describe("collectOutputs()", () => {
  const result = { A_OUT: int32(1, 4), B_OUT: int32(1, 4) };
  it("the requested outputs in request order, else every declared one", () => {
    expect(collectOutputs(request({}, ["B_OUT", "A_OUT"]), result, fixed).map((o) => o.name)).toEqual(["B_OUT", "A_OUT"]);
    expect(collectOutputs(request({}), result, fixed).map((o) => o.name)).toEqual(["A_OUT", "B_OUT"]);
  });

  it("an output asked for with classification: N comes as its top N classes, labelled", () => {
    const scores: Tensor = { datatype: "INT32", shape: [1, 4], data: new Int32Array([5, 9, 1, 7]) };
    const asked: InferRequest = { inputs: [], outputs: [{ name: "A_OUT", parameters: { classification: 2 } }, { name: "B_OUT" }], parameters: {} };
    const [a, b] = collectOutputs(asked, { A_OUT: scores, B_OUT: int32(1, 4) }, fixed, new Map([["A_OUT", ["w", "x", "y", "z"]]]));
    expect(a!.tensor.datatype).toBe("BYTES");
    expect(a!.tensor.shape).toEqual([1, 2]);
    expect((a!.tensor.data as unknown[]).map((v) => (typeof v === "string" ? v : new TextDecoder().decode(v as Uint8Array)))).toEqual(["9:1:x", "7:3:z"]);
    expect(b!.tensor.datatype).toBe("INT32");
  });
});
