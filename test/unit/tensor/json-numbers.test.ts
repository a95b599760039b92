import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DataType } from "../../../runtime/core/tensor.ts";
import { readFlatNumbers } from "../../../runtime/tensor/_json-numbers.ts";
import { decodeJsonData, decodeJsonSpan, needsLosslessJson } from "../../../runtime/tensor/json-tensor.ts";
import { parseJsonLossless } from "../../../runtime/tensor/_lossless-json.ts";

const NUMERIC: DataType[] = ["FP32", "FP64", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64"];

/** The path before readFlatNumbers: JSON.parse (lossless where INT64 needs it), then decodeJsonData. */
function reference(source: string, datatype: DataType, count: number) {
  const target = { name: "x", datatype, shape: [count] };
  try {
    let values: unknown = JSON.parse(source);
    if (needsLosslessJson(datatype, values)) values = parseJsonLossless(source);
    return { data: decodeJsonData(target, values) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
/** Decimal text within a hair of the midpoint of two adjacent FP32 values: where double rounding bites. */
const nearMidpoint = fc
  .tuple(fc.float({ noNaN: true, noDefaultInfinity: true, min: Math.fround(-3e38), max: Math.fround(3e38) }), fc.integer({ min: 15, max: 21 }), digits(0, 6))
  .map(([f, precision, tail]) => {
    const bits = new Uint32Array(new Float32Array([f]).buffer);
    bits[0]! += 1;
    const next = new Float32Array(bits.buffer)[0]!;
    const text = ((f + next) / 2).toPrecision(precision);
    return text.includes("e") ? text : `${text}${text.includes(".") ? "" : "."}${tail || "0"}`;
  });
/** Number tokens as clients write them, plus the corners: long mantissas, exponents, -0, FP32 limits. */
const token = fc.oneof(
  nearMidpoint,
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.float({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.integer({ min: -(2 ** 31), max: 2 ** 32 }).map(String),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 9 }), digits(0, 24), fc.option(digits(1, 24), { nil: undefined }), fc.option(fc.integer({ min: -400, max: 400 }), { nil: undefined }), fc.constantFrom("e", "E", "e+")).map(
    ([neg, lead, int, frac, exp, e]) => `${neg ? "-" : ""}${lead}${int}${frac === undefined ? "" : `.${frac}`}${exp === undefined ? "" : `${exp < 0 ? "e" : e}${exp}`}`,
  ),
  fc.tuple(fc.boolean(), digits(1, 30)).map(([neg, frac]) => `${neg ? "-" : ""}0.${frac}`),
  fc.constantFrom("-0", "0", "0.0", "-0.0e5", "1e-45", "1.401298464324817e-45", "7e-46", "3.4028235e38", "3.4028236e38", "1e39", "1e308", "1e309", "-1e400", "1.5", "1E2", "2e0", "255", "256", "-129", "9007199254740993", "18446744073709551615", "18446744073709551616", "-9223372036854775808", "-9223372036854775809", "1.0e19"),
);
const space = fc.constantFrom("", "", " ", "\n\t ");

describe("readFlatNumbers()", () => {
  it("stores exactly what JSON.parse + decodeJsonData stores, and leaves every refusal to that path", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(token, space, space), { maxLength: 12 }), fc.constantFrom(...NUMERIC), (items, datatype) => {
        const source = `[${items.map(([t, a, b]) => `${a}${t}${b}`).join(",")}]`;
        const want = reference(source, datatype, items.length);
        const got = readFlatNumbers(source, 0, source.length, datatype, items.length);
        if (want.error !== undefined) expect(got).toBeUndefined();
        else {
          // Valid numbers never fall back: the fast path is what serves them.
          expect(got).toBeDefined();
          expect(got!.constructor).toBe(want.data!.constructor);
          expect([...(got as Float64Array)].map((v) => (Object.is(v, -0) ? "-0" : String(v)))).toEqual(
            [...(want.data as Float64Array)].map((v) => (Object.is(v, -0) ? "-0" : String(v))),
          );
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps -0, the smallest FP32 denormal and INT64 digits beyond 2^53 exactly", () => {
    const fp32 = readFlatNumbers("[-0,1e-45,3.4028235e38]", 0, 23, "FP32", 3) as Float32Array;
    expect(Object.is(fp32[0], -0)).toBe(true);
    expect(fp32[1]).toBe(Math.fround(1e-45));
    expect(fp32[2]).toBe(Math.fround(3.4028235e38));
    const text = "[9007199254740993,-9223372036854775808]";
    expect([...(readFlatNumbers(text, 0, text.length, "INT64", 2) as BigInt64Array)]).toEqual([9007199254740993n, -9223372036854775808n]);
  });

  it("returns undefined for nesting, other values, a wrong count or JSON the grammar refuses", () => {
    for (const text of ["[[1]]", "[true]", '["1"]', "[1,2]", "[01]", "[1.]", "[.5]", "[+1]", "[1,]", "[1 2]", "[NaN]", "[0x10]", "[1e]"]) {
      expect(readFlatNumbers(text, 0, text.length, "FP64", 1)).toBeUndefined();
    }
  });
});

describe("decodeJsonSpan() through the fast path", () => {
  it("refuses out-of-range and non-integer values with the reference path's messages", () => {
    const cases: [DataType, string][] = [
      ["INT8", "[1,128]"],
      ["UINT32", "[-1,0]"],
      ["INT32", "[1.5,0]"],
      ["FP32", "[1e39,0]"],
      ["FP64", "[1e309,0]"],
      ["INT64", "[9223372036854775808,0]"],
      ["INT64", "[1.5e300,0]"],
      ["UINT64", "[18446744073709551616,0]"],
    ];
    for (const [datatype, source] of cases) {
      const target = { name: "x", datatype, shape: [2] };
      const want = reference(source, datatype, 2).error;
      expect(want).toBeDefined();
      expect(() => decodeJsonSpan(source, { start: 0, end: source.length, leaves: 2, arrays: 0 }, target)).toThrow(want);
    }
  });
});
