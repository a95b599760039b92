import ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { buildSimpleString } from "../../../models/simple-string.ts";
import { buildSimple } from "../../../models/simple.ts";

describe("simple", () => {
  it("adds and subtracts INT32 inputs of any batch size", async () => {
    const session = await ort.InferenceSession.create(buildSimple());
    expect(session.inputNames).toEqual(["INPUT0", "INPUT1"]);
    expect(session.outputNames).toEqual(["OUTPUT0", "OUTPUT1"]);
    const a = Int32Array.from({ length: 32 }, (_, i) => i * 37 - 500);
    const b = Int32Array.from({ length: 32 }, (_, i) => 1000 - i * i);
    const out = await session.run({
      INPUT0: new ort.Tensor("int32", a, [2, 16]),
      INPUT1: new ort.Tensor("int32", b, [2, 16]),
    });
    expect(out.OUTPUT0.dims).toEqual([2, 16]);
    expect(Array.from(out.OUTPUT0.data as Int32Array)).toEqual(Array.from(a, (x, i) => x + b[i]));
    expect(Array.from(out.OUTPUT1.data as Int32Array)).toEqual(Array.from(a, (x, i) => x - b[i]));
  });
});

describe("simple_string", () => {
  it("adds and subtracts decimal strings, negatives included", async () => {
    const session = await ort.InferenceSession.create(buildSimpleString());
    const a = Array.from({ length: 16 }, (_, i) => String(i * 11 - 80));
    const b = Array.from({ length: 16 }, (_, i) => String(7 - i));
    a[0] = "3";
    b[0] = "-7";
    const out = await session.run({
      INPUT0: new ort.Tensor("string", a, [1, 16]),
      INPUT1: new ort.Tensor("string", b, [1, 16]),
    });
    expect(out.OUTPUT0.type).toBe("string");
    expect(out.OUTPUT0.dims).toEqual([1, 16]);
    expect(out.OUTPUT0.data[0]).toBe("-4");
    expect(out.OUTPUT1.data[0]).toBe("10");
    expect(out.OUTPUT0.data).toEqual(a.map((x, i) => String(Number(x) + Number(b[i]))));
    expect(out.OUTPUT1.data).toEqual(a.map((x, i) => String(Number(x) - Number(b[i]))));
  });
});
