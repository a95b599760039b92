import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { classCount, classify, MAX_CLASSIFIED_ELEMENTS } from "../../../runtime/tensor/mod.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";

const text = (t: Tensor) => (t.data as Uint8Array[]).map((b) => new TextDecoder().decode(b));
const fp32 = (xs: number[], shape = [xs.length]): Tensor => ({ datatype: "FP32", shape, data: new Float32Array(xs) });

describe("classification", () => {
  it("writes values as C++'s std::to_string (Triton's): six decimals for floats, nan and inf, integers in full", () => {
    expect(text(classify(fp32([1, NaN, 0.25, -0, Infinity, -Infinity]), 6, { batched: false, name: "x" }))).toEqual([
      "inf:4",
      "1.000000:0",
      "0.250000:2",
      "-0.000000:3",
      "-inf:5",
      "nan:1",
    ]);
    const wide: Tensor = { datatype: "INT64", shape: [2, 3], data: new BigInt64Array([5n, 2n ** 62n, 9n, -1n, 2n, 3n]) };
    expect(text(classify(wide, 2, { batched: true, name: "x" }))).toEqual([`${2n ** 62n}:1`, "9:2", "3:2", "2:1"]);
  });

  it("ranks highest first with ties to the lower index, whichever path (few of many, or a full sort) it takes", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 200 }), fc.integer({ min: 1, max: 220 }), (values, n) => {
        const tensor: Tensor = { datatype: "INT8", shape: [values.length], data: Int8Array.from(values) };
        const expected = values
          .map((v, i) => ({ v, i }))
          .sort((a, b) => b.v - a.v || a.i - b.i)
          .slice(0, n)
          .map(({ v, i }) => `${v}:${i}`);
        expect(text(classify(tensor, n, { batched: false, name: "x" }))).toEqual(expected);
      }),
    );
  });

  it("shapes [batch, n] for a batched output, [n] otherwise; labels where the file has one", () => {
    const batched = classify(fp32([1, 3, 2, 6, 5, 4], [2, 3]), 2, { batched: true, name: "x", labels: ["a", "", "c"] });
    expect(batched.shape).toEqual([2, 2]);
    expect(text(batched)).toEqual(["3.000000:1", "2.000000:2:c", "6.000000:0:a", "5.000000:1"]);
    expect(classify(fp32([1, 3, 2, 6, 5, 4], [2, 3]), 2, { batched: false, name: "x" }).shape).toEqual([2]);
  });

  it("checks the count and the datatype before anything runs, and bounds the values per entry", () => {
    expect(classCount(undefined, "y", "FP32")).toBeUndefined();
    expect(classCount({ classification: 0 }, "y", "BYTES")).toBe(0);
    expect(() => classCount({ classification: 1.5 }, "y", "FP32")).toThrow("output 'y' parameter 'classification' must be a number of classes (an integer ≥ 0), got 1.5");
    for (const type of ["FP16", "BF16", "BOOL", "BYTES"] as const) {
      expect(() => classCount({ classification: 1 }, "y", type)).toThrow(`class result not available for output 'y' due to unsupported type '${type}'`);
    }
    const huge: Tensor = { datatype: "UINT8", shape: [MAX_CLASSIFIED_ELEMENTS + 1], data: new Uint8Array(MAX_CLASSIFIED_ELEMENTS + 1) };
    expect(() => classify(huge, 1, { batched: false, name: "y" })).toThrow(/over the ceiling of 1000000/);
  });
});
