import { afterEach, describe, expect, it } from "vitest";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: new Array(512).fill(0.5) }] });
type Event = { name: string; ph: string; pid: number; tid: number; ts: number; dur?: number; cat?: string; args?: { name?: string; rows?: number; input_us?: number; wait_us?: number; infer_us?: number; output_us?: number } };

describe("trace timeline", () => {
  it("records every execution on its instance's track, and queue waits, as Chrome trace JSON", async () => {
    const repo = tempRepository("mlp");
    server = await startServer({ repository: repo, traceRate: 1 });
    await Promise.all(Array.from({ length: 30 }, () => fetch(`${server!.url}/v2/models/mlp/infer`, { method: "POST", body })));
    const trace = await (await fetch(`${server.url}/v2/trace?seconds=60`)).json();
    const events: Event[] = trace.traceEvents;
    const names = events.filter((e) => e.ph === "M").map((e) => e.args?.name);
    expect(names).toEqual(expect.arrayContaining(["mlp v1", "instance 1", "queue"]));
    const executions = events.filter((e) => e.cat === "execution");
    const { model_stats } = await (await fetch(`${server.url}/v2/models/mlp/stats`)).json();
    expect(executions).toHaveLength(model_stats[0].execution_count);
    expect(executions.reduce((n, e) => n + e.args!.rows!, 0)).toBe(30);
    expect(executions.every((e) => e.tid === 1 && e.dur! > 0 && e.name === `batch ${e.args!.rows}`)).toBe(true);
    // An execution spans its phases: gathering inputs, waiting for its turn (on the event loop), computing, slicing.
    for (const { dur, args } of executions) expect(Math.abs(dur! - (args!.input_us! + args!.wait_us! + args!.infer_us! + args!.output_us!))).toBeLessThanOrEqual(2);
    // One instance runs one batch at a time: its executions never overlap on the timeline.
    const sorted = [...executions].sort((a, b) => a.ts - b.ts);
    sorted.slice(1).forEach((e, i) => expect(e.ts).toBeGreaterThanOrEqual(sorted[i]!.ts + sorted[i]!.dur! - 1));
    expect(events.filter((e) => e.cat === "queue")).toHaveLength(30);
  });

  it("records nothing when tracing is off (the serve default)", async () => {
    server = await startServer({ repository: tempRepository("mlp") });
    await fetch(`${server.url}/v2/models/mlp/infer`, { method: "POST", body });
    const trace = await (await fetch(`${server.url}/v2/trace`)).json();
    expect(trace.traceEvents).toEqual([]);
    expect((await fetch(`${server.url}/v2/trace?seconds=-1`)).status).toBe(400);
  });
});
