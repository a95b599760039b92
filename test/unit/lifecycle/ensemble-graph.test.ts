import { describe, expect, it } from "vitest";
import { includesItself, stepsOnlyOf } from "../../../runtime/lifecycle/ensemble-graph.ts";

const graph: Record<string, string[]> = { a: ["b", "c"], b: ["d"], e: ["c"], loop: ["x"], x: ["loop"] };
const stepsOf = (n: string) => graph[n] ?? [];
const exists = (n: string) => ["a", "b", "c", "d", "e", "loop", "x"].includes(n);

describe("the ensemble graph", () => {
  it("finds a path back to an ensemble through its steps, or none", () => {
    expect(includesItself("loop", stepsOf)).toEqual(["loop", "x", "loop"]);
    expect(includesItself("a", stepsOf)).toBeUndefined();
  });

  it("unload_dependents: the steps an ensemble runs, nested, except those another wanted ensemble runs", () => {
    expect(stepsOnlyOf("a", ["a", "e"], stepsOf, exists).sort()).toEqual(["b", "d"]);
    expect(stepsOnlyOf("a", ["a"], stepsOf, exists).sort()).toEqual(["b", "c", "d"]);
    expect(stepsOnlyOf("a", ["a"], (n) => (n === "a" ? ["gone"] : []), exists)).toEqual([]);
  });
});
