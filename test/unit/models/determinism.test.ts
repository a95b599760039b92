import { describe, expect, it } from "vitest";
import { buildMlp, mlpWeights } from "../../../models/mlp.ts";
import { mulberry32 } from "../../../models/prng.ts";
import { buildSimpleString } from "../../../models/simple-string.ts";
import { buildSimple } from "../../../models/simple.ts";

describe("model builders are deterministic", () => {
  it("simple builds to identical bytes", () => {
    expect(Buffer.from(buildSimple()).equals(buildSimple())).toBe(true);
  });

  it("simple_string builds to identical bytes", () => {
    expect(Buffer.from(buildSimpleString()).equals(buildSimpleString())).toBe(true);
  });

  it("mlp builds to identical bytes", () => {
    expect(Buffer.from(buildMlp()).equals(buildMlp())).toBe(true);
  });

  it("mulberry32 is a fixed sequence for a seed", () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const first = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(first);
    expect(Array.from({ length: 5 }, mulberry32(43))).not.toEqual(first);
    for (const x of first) expect(x >= 0 && x < 1).toBe(true);
  });

  it("mlp weights have the documented shapes", () => {
    expect(mlpWeights().map((l) => [l.inputs, l.outputs, l.weight.length, l.bias.length])).toEqual([
      [512, 2048, 512 * 2048, 2048],
      [2048, 1024, 2048 * 1024, 1024],
      [1024, 10, 1024 * 10, 10],
    ]);
  });
});
