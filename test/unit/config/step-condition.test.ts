import { describe, expect, it } from "vitest";
import { conditionTensors, evaluateCondition, parseCondition } from "../../../runtime/config/mod.ts";

const tensors: Record<string, (number | string)[]> = { score: [0.2, 0.9], empty: [], label: ["cat"], zeros: [0, 0] };
const holds = (text: string, params: Record<string, string | number | boolean> = {}) =>
  evaluateCondition(parseCondition(text), { tensor: (n) => tensors[n]!, param: (n) => params[n] });

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
