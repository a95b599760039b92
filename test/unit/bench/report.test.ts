import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../../adapters/bench/bench-options.ts";
import { formatJson, formatTable } from "../../../adapters/bench/report.ts";
import type { StepResult } from "../../../adapters/bench/report.ts";

const step: StepResult = {
  concurrency: 4,
  windowS: 2,
  requests: 2000,
  reqPerS: 1000,
  inferPerS: 1000,
  latencyMs: { p50: 1.234, p90: 2, p95: 3, p99: 4.5, avg: 1.5, max: 9 },
  errors: 0,
  firstError: null,
  maxOutstanding: 4,
  capHits: 0,
  unsent: 0,
  server: {
    inferenceCount: 2000,
    executionCount: 500,
    successCount: 2000,
    failCount: 0,
    avgBatchSize: 4,
    queueUsPerRequest: 512.4,
    requestUsPerRequest: 900,
    computeUsPerExecution: 42.25,
    computeInputUsPerExecution: 1,
    computeInferUsPerExecution: 40,
    computeOutputUsPerExecution: 1.25,
  },
  serverError: null,
};

describe("formatTable()", () => {
  const options = parseBenchArgs(["http://h:1", "--model", "mlp", "--concurrency", "4,8", "--binary", "--duration", "2s"]);

  it("prints the settings, a header and one right-aligned row per step", () => {
    const lines = formatTable(options, [step]).trimEnd().split("\n");
    expect(lines[0]).toBe("tensorfn bench: mlp at http://h:1, closed loop, batch 1, binary tensors, random data, 2s windows after 1s warmup");
    expect(lines[2]!.split(/\s{2,}/)).toEqual(["concurrency", "infer/s", "req/s", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "errors", "srv batch", "srv queue µs/req", "srv compute µs/exec"]);
    expect(lines[3]!.trim().split(/\s+/)).toEqual(["4", "1000.0", "1000.0", "1.23", "2.00", "3.00", "4.50", "0", "4.00", "512", "42.3"]);
    expect(lines[3]!.length).toBe(lines[2]!.length);
    expect(lines).toHaveLength(4);
  });

  it("shows n/a in the server columns and says why, and notes failed requests", () => {
    const bad = { ...step, server: null, serverError: "GET /v2/models/mlp/stats: HTTP 404", errors: 3, firstError: "HTTP 503: queue full" };
    const text = formatTable(options, [bad]);
    expect(text.split("\n")[3]!.trim().split(/\s+/).slice(-3)).toEqual(["n/a", "n/a", "n/a"]);
    expect(text).toContain("concurrency 4: 3 failed requests; first: HTTP 503: queue full");
    expect(text).toContain("server columns n/a: GET /v2/models/mlp/stats: HTTP 404");
  });

  it("leads with the rate and adds a cap column in the open loop", () => {
    const open = parseBenchArgs(["http://h:1", "--model", "mlp", "--request-rate", "100"]);
    const lines = formatTable(open, [{ ...step, concurrency: undefined, requestRate: 100, capHits: 2, unsent: 7 }]).split("\n");
    expect(lines[2]!.trim().split(/\s{2,}/).slice(0, 2)).toEqual(["rate/s", "infer/s"]);
    expect(lines[2]).toContain("cap hits");
    expect(lines.join("\n")).toContain("rate 100/s: 1024 requests outstanding (the cap) 2 times; 7 scheduled sends never went out");
  });
});

describe("formatJson()", () => {
  it("holds the command's settings and every step's numbers", () => {
    const options = parseBenchArgs(["http://h:1", "--model", "mlp", "--json"]);
    const doc = JSON.parse(formatJson(options, [step]));
    expect(doc.config).toMatchObject({ url: "http://h:1", model: "mlp", version: null, mode: "concurrency", levels: [1], binary: false });
    expect(doc.config.json).toBeUndefined();
    expect(doc.steps[0]).toMatchObject({ concurrency: 4, inferPerS: 1000, latencyMs: { p50: 1.234 }, server: { avgBatchSize: 4 } });
  });
});
