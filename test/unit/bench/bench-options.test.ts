import { describe, expect, it } from "vitest";
import { parseBenchArgs, parseDuration, parseRange, parseShape } from "../../../adapters/bench/bench-options.ts";

const int = { integer: true };

describe("parseRange()", () => {
  it("reads `1:64:x2` as 1, 2, 4, … 64", () => {
    expect(parseRange("--concurrency", "1:64:x2", int)).toEqual([1, 2, 4, 8, 16, 32, 64]);
  });

  it("stops at the last level not above the end: `1:10:x2` is 1, 2, 4, 8", () => {
    expect(parseRange("--concurrency", "1:10:x2", int)).toEqual([1, 2, 4, 8]);
  });

  it("reads a single number, a comma list, and perf_analyzer's additive `a:b:step`", () => {
    expect(parseRange("--concurrency", "8", int)).toEqual([8]);
    expect(parseRange("--concurrency", "1,8,32", int)).toEqual([1, 8, 32]);
    expect(parseRange("--concurrency", "2:8:3", int)).toEqual([2, 5, 8]);
    expect(parseRange("--concurrency", "1:3", int)).toEqual([1, 2, 3]);
  });

  it("allows fractional rates but rounds (and dedupes) concurrency", () => {
    expect(parseRange("--request-rate", "100:400:x2", { integer: false })).toEqual([100, 200, 400]);
    expect(parseRange("--request-rate", "0.5,2.5", { integer: false })).toEqual([0.5, 2.5]);
    expect(parseRange("--concurrency", "1:4:x1.5", int)).toEqual([1, 2, 3]);
  });

  it("names the flag and the value when it refuses one", () => {
    expect(() => parseRange("--concurrency", "0:4", int)).toThrow("--concurrency '0:4' has '0', which is not a positive number");
    expect(() => parseRange("--concurrency", "8:1", int)).toThrow("--concurrency '8:1' ends (1) below its start (8)");
    expect(() => parseRange("--concurrency", "1:8:x1", int)).toThrow(/factor must be more than 1/);
    expect(() => parseRange("--concurrency", "1.5", int)).toThrow(/not a whole number/);
    expect(() => parseRange("--concurrency", "a", int)).toThrow(/'a'/);
    expect(() => parseRange("--concurrency", "1:2:3:4", int)).toThrow(/not N/);
  });
});

describe("parseDuration() and parseShape()", () => {
  it("reads ms, s, m and bare seconds", () => {
    expect(parseDuration("--duration", "300ms")).toBe(300);
    expect(parseDuration("--duration", "1.5s")).toBe(1500);
    expect(parseDuration("--duration", "2m")).toBe(120_000);
    expect(parseDuration("--duration", "5")).toBe(5000);
    expect(() => parseDuration("--duration", "5 sec")).toThrow("--duration '5 sec' is not a duration");
  });

  it("splits `name:d1,d2` at the last colon", () => {
    expect(parseShape("INPUT0:3,224,224")).toEqual(["INPUT0", [3, 224, 224]]);
    expect(parseShape("ns:x:4")).toEqual(["ns:x", [4]]);
    expect(() => parseShape("INPUT0")).toThrow(/name:d1,d2/);
    expect(() => parseShape("INPUT0:0")).toThrow(/positive/);
  });
});

describe("parseBenchArgs()", () => {
  it("defaults to one closed-loop step at concurrency 1 with 5 s windows after a 1 s warmup", () => {
    expect(parseBenchArgs(["http://h:8000/", "--model", "mlp"])).toMatchObject({
      url: "http://h:8000",
      model: "mlp",
      mode: "concurrency",
      levels: [1],
      batchSize: 1,
      binary: false,
      inputData: "random",
      durationMs: 5000,
      warmupMs: 1000,
      json: false,
    });
  });

  it("switches to the open loop with --request-rate and collects repeated --shape", () => {
    const options = parseBenchArgs(["http://h", "-m", "m", "--request-rate", "100:400:x2", "--poisson", "--shape", "a:1,2", "--shape", "b:3"]);
    expect(options).toMatchObject({ mode: "request-rate", levels: [100, 200, 400], distribution: "poisson", shapes: { a: [1, 2], b: [3] } });
  });

  it("refuses missing or contradictory arguments", () => {
    expect(() => parseBenchArgs(["--model", "m"])).toThrow("bench needs the server URL");
    expect(() => parseBenchArgs(["http://h"])).toThrow("bench needs --model");
    expect(() => parseBenchArgs(["localhost:8000", "--model", "m"])).toThrow(/not an http/);
    expect(() => parseBenchArgs(["http://h", "-m", "m", "--concurrency", "1", "--request-rate", "5"])).toThrow(/not both/);
    expect(() => parseBenchArgs(["http://h", "-m", "m", "--poisson"])).toThrow("--poisson needs --request-rate");
    expect(() => parseBenchArgs(["http://h", "-m", "m", "--input-data", "ones"])).toThrow("--input-data 'ones'");
    expect(() => parseBenchArgs(["http://h", "-m", "m", "--batch-size", "0"])).toThrow("--batch-size '0'");
    expect(() => parseBenchArgs(["http://h", "-m", "m", "--frobnicate"])).toThrow(/frobnicate/);
  });
});
