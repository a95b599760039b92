import { describe, expect, it } from "vitest";
import { parseJsonLossless } from "../../../runtime/tensor/_lossless-json.ts";

describe("parseJsonLossless()", () => {
  it("`parseJsonLossless()` matches JSON.parse on ordinary JSON", () => {
    const samples = [
      '{"a":[1,2.5,-3e2,true,false,null,"x\\"y\\\\z\\u00e9\\n"],"b":{},"c":[],"d":{"e":[[[]]]}}',
      ' [ 1 , { "k" : "v" } , [ ] ] ',
      '"top"',
      "-0",
      '{"a":1,"a":2}',
      '{"__proto__":{"polluted":true}}',
    ];
    for (const s of samples) expect(parseJsonLossless(s)).toEqual(JSON.parse(s));
    expect(Object.getPrototypeOf(parseJsonLossless('{"__proto__":{"x":1}}'))).toBe(Object.prototype);
  });

  it("`parseJsonLossless()` keeps integer literals beyond 2^53 as exact bigints", () => {
    expect(parseJsonLossless("[9007199254740991,9007199254740992,-9223372036854775808,18446744073709551615]")).toEqual([
      9007199254740991,
      9007199254740992n,
      -9223372036854775808n,
      18446744073709551615n,
    ]);
    expect(parseJsonLossless("[1e20,9007199254740993.0]")).toEqual([1e20, 9007199254740992]);
  });

  it("`parseJsonLossless()` survives nesting deeper than the call stack", () => {
    const depth = 100_000;
    const parsed = parseJsonLossless("[".repeat(depth) + "]".repeat(depth));
    let node: unknown = parsed;
    let n = 0;
    while (Array.isArray(node) && node.length > 0) {
      node = node[0];
      n++;
    }
    expect(n).toBe(depth - 1);
  });
});
