import { describe, expect, it } from "vitest";
import { CostModel } from "../../../runtime/scheduler/mod.ts";

/** A deterministic pseudo-random sequence in [0, 1), so the noise is the same every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe("CostModel", () => {
  it("converges on a simulated cost 0.05·n + 0.4 ms under ±10 % noise", () => {
    const model = new CostModel();
    const next = random(7);
    for (let i = 0; i < 500; i++) {
      const rows = 1 + Math.floor(next() * 32);
      const ms = (0.05 * rows + 0.4) * (0.9 + 0.2 * next());
      model.observe(rows, ms);
    }
    const fit = model.fit()!;
    expect(fit.a).toBeGreaterThan(0.045);
    expect(fit.a).toBeLessThan(0.055);
    expect(fit.b).toBeGreaterThan(0.32);
    expect(fit.b).toBeLessThan(0.48);
  });

  it("follows a machine that slows down (old samples are forgotten)", () => {
    const model = new CostModel({ halfLife: 32 });
    for (let i = 0; i < 300; i++) model.observe(1 + (i % 16), 0.05 * (1 + (i % 16)) + 0.4);
    for (let i = 0; i < 300; i++) model.observe(1 + (i % 16), 0.1 * (1 + (i % 16)) + 1);
    const fit = model.fit()!;
    expect(fit.a).toBeCloseTo(0.1, 2);
    expect(fit.b).toBeCloseTo(1, 1);
  });

  it("splits the cost half fixed, half per row while every execution had the same size", () => {
    const model = new CostModel();
    expect(model.fit()).toBeUndefined();
    expect(model.predict(4)).toBe(0);
    for (let i = 0; i < 10; i++) model.observe(4, 2);
    expect(model.fit()).toEqual({ a: 0.25, b: 1 });
  });

  it("never fits a negative coefficient", () => {
    const model = new CostModel();
    for (let i = 0; i < 50; i++) model.observe(1 + (i % 8), 1 - 0.01 * (i % 8));
    const fit = model.fit()!;
    expect(fit.a).toBe(0);
    expect(fit.b).toBeGreaterThan(0);
  });
});
