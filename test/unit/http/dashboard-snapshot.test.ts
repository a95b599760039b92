import { describe, expect, it } from "vitest";
import { ModelStats, RateHistory } from "../../../runtime/metrics/mod.ts";
import type { MetricsEntry } from "../../../runtime/metrics/mod.ts";
import { SnapshotBuilder } from "../../../runtime/http/dashboard/dashboard-snapshot.ts";
import type { Sample } from "../../../runtime/http/dashboard/dashboard-snapshot.ts";

describe("dashboard snapshots", () => {
  it("turn counters into per-second rates between two snapshots: requests, failures, rate-limit refusals", () => {
    const stats = new ModelStats();
    const entry: MetricsEntry = { name: "mlp", version: "1", state: "READY", instances: 1, targetInstances: 1, pending: 0, stats, memory: { host: 0, device: 0 } };
    const builder = new SnapshotBuilder(() => [entry], () => ({ traceEvents: [] }));
    expect(builder.next(0).functions[0]).toMatchObject({ reqPerS: 0, failPerS: 0, rateLimitedPerS: 0 });
    for (let i = 0; i < 6; i++) stats.succeeded(2);
    for (let i = 0; i < 3; i++) stats.rateLimited();
    stats.failed(1, "OTHER");
    expect(builder.next(2000).functions[0]).toMatchObject({ reqPerS: 3, failPerS: 2, rateLimitedPerS: 1.5 });
  });

  it("say why the batches since the last snapshot left: the share of executions by the batcher's reason", () => {
    const stats = new ModelStats();
    const entry: MetricsEntry = { name: "mlp", version: "1", state: "READY", instances: 1, targetInstances: 1, pending: 0, stats, memory: { host: 0, device: 0 } };
    const builder = new SnapshotBuilder(() => [entry], () => ({ traceEvents: [] }));
    const execution = (reason: "delay" | "no_arrivals", rows: number) => stats.executed({ reason, rows, requests: rows, inputMs: 0, inferMs: 1, waitMs: 0, outputMs: 0, startMs: 0, instance: 1 });
    execution("delay", 2);
    builder.next(0);
    for (let i = 0; i < 3; i++) execution("no_arrivals", 4);
    execution("delay", 2);
    expect(builder.next(1000).functions[0]).toMatchObject({ avgBatch: 3.5, dispatchShares: { no_arrivals: 0.75, delay: 0.25 } });
  });

  it("a snapshot asked for at any moment has rates over the last window, from the sampled history", () => {
    const stats = new ModelStats();
    const entry: MetricsEntry = { name: "mlp", version: "1", state: "READY", instances: 1, targetInstances: 1, pending: 0, stats, memory: { host: 0, device: 0 } };
    const builder = new SnapshotBuilder(() => [entry], () => ({ traceEvents: [] }));
    const history = new RateHistory<Sample>(300_000);
    expect(builder.over(0, 10_000, history).functions[0]).toMatchObject({ reqPerS: 0 });
    // One sample a second for 30 s: 5 requests a second for the first 20 s, then 50 a second.
    for (let t = 0; t <= 30; t++) {
      builder.sampleInto(history, t * 1000);
      for (let i = 0; i < (t < 20 ? 5 : 50); i++) stats.succeeded(1);
    }
    const snapshot = builder.over(30_000, 10_000, history);
    expect(snapshot.windowSeconds).toBe(10);
    expect(snapshot.functions[0]!.reqPerS).toBeCloseTo((11 * 50) / 10, 5); // since the sample at 20 s: the 50-a-second requests of 20 s … 30 s
    // A window longer than the history covers what there is, and says so.
    expect(builder.over(30_000, 100_000, history).windowSeconds).toBe(30);
  });

  it("shows a version that the next request loads as COLD, whatever KServe calls it", () => {
    const entry: MetricsEntry = { name: "lazy", version: "1", state: "UNAVAILABLE", cold: true, instances: 0, targetInstances: 0, pending: 0, stats: new ModelStats(), memory: { host: 0, device: 0 } };
    const builder = new SnapshotBuilder(() => [entry], () => ({ traceEvents: [] }));
    expect(builder.next(0).functions[0]!.state).toBe("COLD");
  });

  it("shows a sequence model's live sequences, and none for other functions", () => {
    const base = { version: "1", state: "READY", instances: 1, targetInstances: 1, pending: 0, stats: new ModelStats(), memory: { host: 0, device: 0 } };
    const builder = new SnapshotBuilder(() => [{ ...base, name: "vad", sequences: 12 }, { ...base, name: "mlp" }], () => ({ traceEvents: [] }));
    const [vad, mlp] = builder.next(0).functions;
    expect([vad!.sequences, mlp!.sequences]).toEqual([12, undefined]);
  });

  it("carries each version's reason from the repository index, and has a row for a function with no version to measure", () => {
    const base = { version: "1", instances: 0, targetInstances: 0, pending: 0, stats: new ModelStats(), memory: { host: 0, device: 0 } };
    const statuses = [
      { name: "text", version: "1", state: "FAILED", reason: "failed to load 'text' version 1: not a model" },
      { name: "mlp", version: "1", state: "READY", reason: "" },
      { name: "typo", state: "FAILED", reason: "typo/function.yaml:2: max_batch_sise: unknown field" },
    ];
    const builder = new SnapshotBuilder(() => [{ ...base, name: "text", state: "FAILED" }, { ...base, name: "mlp", state: "READY" }], () => ({ traceEvents: [] }), () => statuses);
    const rows = builder.next(0).functions;
    expect(rows.map((r) => [r.name, r.version, r.state, r.reason])).toEqual([
      ["text", "1", "FAILED", "failed to load 'text' version 1: not a model"],
      ["mlp", "1", "READY", undefined],
      ["typo", "", "FAILED", "typo/function.yaml:2: max_batch_sise: unknown field"],
    ]);
  });
});

describe("RateHistory", () => {
  it("keeps only its span per key, answers the newest sample at or before a time, and drops keys gone quiet", () => {
    const h = new RateHistory<number>(10_000);
    for (let t = 0; t <= 60_000; t += 1000) h.record("a", t, t);
    expect(h.size).toBe(11);
    expect(h.at("a", 55_500)!.value).toBe(55_000);
    expect(h.at("a", 0)!.value).toBe(50_000); // older than the span: the oldest kept
    expect(h.at("b", 0)).toBeUndefined();
    h.prune(71_000);
    expect(h.size).toBe(0);
  });
});
