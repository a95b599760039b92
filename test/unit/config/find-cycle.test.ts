import { describe, expect, it } from "vitest";
import { findCycle } from "../../../runtime/config/_ensemble-rules.ts";

describe("findCycle()", () => {
  it("finds none in a chain of 200 000 steps, listed either way, without overflowing the call stack", () => {
    const n = 200_000;
    const forward = Array.from({ length: n }, (_, i) => (i === 0 ? [] : [i - 1]));
    const backward = Array.from({ length: n }, (_, i) => (i === n - 1 ? [] : [i + 1]));
    expect(findCycle(forward)).toBeUndefined();
    expect(findCycle(backward)).toBeUndefined();
  });

  it("names a cycle in data-flow order from its lowest step, even at the end of a long chain", () => {
    expect(findCycle([[1], [0]])).toEqual([0, 1]);
    // Step i reads step i + 1's output, and the last reads step 5's: 5 → … → 9 → 5 in data-flow order reversed.
    const needs = Array.from({ length: 10 }, (_, i) => (i === 9 ? [5] : [i + 1]));
    expect(findCycle(needs)).toEqual([5, 9, 8, 7, 6]);
    expect(findCycle([[], [2], [1], [0]])).toEqual([1, 2]);
  });
});
