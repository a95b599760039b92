import { describe, expect, it } from "vitest";
import { summariseObservability } from "../../../bench/suites/observability-verdict.ts";

const round = (off: number, on: number, first: "off" | "on" = "off") => ({ order: first === "off" ? (["off", "on"] as const).slice() : (["on", "off"] as const).slice(), off, on });

describe("summariseObservability()", () => {
  it("claims met only when every round's on ÷ off reaches the target, with the spread", () => {
    const s = summariseObservability([round(100, 99), round(100, 98, "on"), round(100, 101)], 0.97);
    expect(s.verdict).toBe("met");
    expect(s.min).toBeCloseTo(0.98, 10);
    expect(s.max).toBeCloseTo(1.01, 10);
    expect(s.stdev).toBeCloseTo(0.01527525, 6);
    expect(s.sentence).toBe("On ÷ off per round: mean 0.993, range 0.980–1.010, stdev 0.015 over 3 rounds. Every round reached the target ≥ 0.97: **met**.");
  });

  it("says the run cannot tell when rounds fall on both sides (the 0.945 and 1.096 of the old two rounds)", () => {
    const s = summariseObservability([round(2823.7, 2668.5), round(3100.5, 3397.1, "on")], 0.97);
    expect(s.verdict).toBe("within noise");
    expect(s.sentence).toContain("range 0.945–1.096");
    expect(s.sentence).toContain("cannot tell");
    expect(s.sentence).not.toMatch(/\*\*met\*\*|\*\*missed\*\*/);
  });

  it("claims missed only when no round reaches the target", () => {
    expect(summariseObservability([round(100, 90), round(100, 95, "on")], 0.97).verdict).toBe("missed");
  });
});
