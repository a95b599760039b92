import { describe, expect, it } from "vitest";
import { percentile, summarizeLatencies } from "../../../adapters/bench/percentiles.ts";

describe("percentile()", () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it("takes the nearest rank: p50 of 1..100 is 50, p99 is 99, p100 is 100", () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 90)).toBe(90);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
  });

  it("rounds the rank up, so p50 of four samples is the second and p99 the last", () => {
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 99)).toBe(40);
  });

  it("returns the only sample for any p, and undefined for none", () => {
    expect(percentile([7], 1)).toBe(7);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeUndefined();
  });
});

describe("summarizeLatencies()", () => {
  it("sorts a copy and reports p50/p90/p95/p99, mean and max", () => {
    const samples = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(summarizeLatencies(samples)).toEqual({ p50: 5, p90: 9, p95: 10, p99: 10, avg: 5.5, max: 10 });
    expect(samples[0]).toBe(5);
  });

  it("sorts numerically, not as strings", () => {
    expect(summarizeLatencies([100, 9, 20])!.p50).toBe(20);
  });

  it("is undefined without samples", () => {
    expect(summarizeLatencies([])).toBeUndefined();
  });
});
