import { describe, expect, it } from "vitest";
import { summarizeStep } from "../../../adapters/bench/step-summary.ts";

describe("summarizeStep()", () => {
  const step = {
    windowStart: 1000,
    windowEnd: 2000,
    maxOutstanding: 2,
    capHits: 0,
    unsent: 0,
    samples: [
      { start: 990, end: 1010 }, // began in the warmup: throughput yes, latency no
      { start: 1100, end: 1104 },
      { start: 1200, end: 1202 },
      { start: 1300, end: 1301, error: "HTTP 400: bad" },
      { start: 1990, end: 2050 }, // answered after the window: latency yes, throughput no
    ],
  };

  it("counts answers inside the window for throughput and requests sent inside it for latency", () => {
    const summary = summarizeStep(step, 4);
    expect(summary).toMatchObject({ windowS: 1, requests: 3, reqPerS: 3, inferPerS: 12, errors: 1, firstError: "HTTP 400: bad" });
    expect(summary.latencyMs).toMatchObject({ p50: 4, p99: 60, max: 60 });
  });

  it("has no latency when nothing succeeded", () => {
    expect(summarizeStep({ ...step, samples: [] }, 1)).toMatchObject({ requests: 0, latencyMs: undefined, errors: 0 });
  });
});
