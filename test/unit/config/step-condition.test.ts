import { describe, expect, it } from "vitest";
import { conditionTensors, evaluateCondition, parseCondition, reduceTensor } from "../../../runtime/config/mod.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";

const bytes = (...texts: string[]): Pick<Tensor, "data"> => ({ data: texts.map((t) => new TextEncoder().encode(t)) } as Pick<Tensor, "data">);
const tensors: Record<string, Pick<Tensor, "data">> = {
  score: { data: new Float64Array([0.2, 0.9]) },
  empty: { data: new Float32Array(0) },
  label: bytes("cat"),
  zeros: { data: new Int32Array(2) },
};
const holds = (text: string, params: Record<string, string | number | boolean> = {}) =>
  evaluateCondition(parseCondition(text), { tensor: (n, fn) => reduceTensor(tensors[n]!, fn), param: (n) => params[n] });

describe("step conditions (ours, no eval)", () => {
  it("reads tensors through any, all, max, min, sum, size, first and a bare name (its first element)", () => {
    expect([holds("max(score) > 0.5"), holds("min(score) > 0.5"), holds("sum(score) == 1.1"), holds("size(empty) == 0")]).toEqual([true, false, true, true]);
    expect([holds("any(zeros)"), holds("all(score)"), holds("score < 0.5"), holds("label == 'cat'"), holds('first(label) != "dog"')]).toEqual([false, true, true, true, true]);
  });

  it("reads request parameters, absent ones as undefined; ! && || and parentheses with the usual precedence", () => {
    expect([holds("param('rotate') == true", { rotate: true }), holds("param('rotate')"), holds("!param('rotate')")]).toEqual([true, false, true]);
    expect(holds("param('n') >= 3 && max(score) > 0.5 || false", { n: 3 })).toBe(true);
    expect(holds("!(max(score) > 0.5) || param('force')")).toBe(false);
    expect(holds("param('mode') == 'fast'", { mode: "fast" })).toBe(true);
    expect(holds("size(empty) > -1")).toBe(true);
  });

  it("reduceTensor() reads 64-bit integers, BYTES as text or numbers, NaN as Math.max does, and 200 000 elements without spreading them into a call", () => {
    expect(reduceTensor({ data: new BigInt64Array([5n, -7n]) }, "min")).toBe(-7);
    expect([reduceTensor(bytes("2", "10"), "max"), reduceTensor(bytes("2", "10"), "sum"), reduceTensor(bytes("", "x"), "any"), reduceTensor(bytes("", "x"), "all")]).toEqual([10, 12, true, false]);
    expect(reduceTensor({ data: new Float32Array([1, NaN, 3]) }, "max")).toBeNaN();
    expect([reduceTensor({ data: new Float32Array(0) }, "max"), reduceTensor({ data: new Float32Array(0) }, "sum"), reduceTensor(bytes(), "first")]).toEqual([undefined, 0, undefined]);
    const big = new Float32Array(200_000).map((_, i) => i);
    expect([reduceTensor({ data: big }, "max"), reduceTensor({ data: big }, "min"), reduceTensor({ data: big }, "size")]).toEqual([199_999, 0, 200_000]);
  });

  it("lists the tensors it reads (its step waits for them)", () => {
    expect(conditionTensors(parseCondition("max(score) > 0.5 && label == 'x' || param('p')"))).toEqual(["score", "label"]);
  });

  it("refuses what is not a condition, saying where", () => {
    expect(() => parseCondition("max(score) >")).toThrow("ends too early: expected a value");
    expect(() => parseCondition("eval(score)")).toThrow("'eval' is not a function");
    expect(() => parseCondition("score; process.exit()")).toThrow('cannot read "; process.exit()" (at character 6)');
    expect(() => parseCondition("param(x)")).toThrow("param() takes a quoted name");
    expect(() => parseCondition("(a")).toThrow("ends too early: expected )");
    expect(() => parseCondition("a b")).toThrow("unexpected b after a complete condition");
    expect(() => parseCondition("(".repeat(100) + "a" + ")".repeat(100))).toThrow("nests deeper than 64");
  });
});
