import { describe, expect, it } from "vitest";
import { ModelStats } from "../../../runtime/metrics/mod.ts";
import type { MetricsEntry } from "../../../runtime/metrics/mod.ts";
import { SnapshotBuilder } from "../../../runtime/http/dashboard/dashboard-snapshot.ts";

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
});
