import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startServer } from "../support/start-server.ts";
import type { TestServer } from "../support/start-server.ts";
import { spawnServer, tempRepository } from "../support/spawn-server.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: new Array(512).fill(0.5) }] });
type Event = { name: string; ph: string; pid: number; tid: number; ts: number; dur?: number; cat?: string; args?: { name?: string; rows?: number } };

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

  it("writes --trace-file at shutdown", async () => {
    const file = join(tmpdir(), `tensorfn-trace-${process.pid}.json`);
    const spawned = await spawnServer("node", ["adapters/node/bin.mjs", "serve", "--repo", tempRepository("simple"), "--port", "0", "--trace-rate", "1", "--trace-file", file]);
    const simple = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) });
    await fetch(`${spawned.url}/v2/models/simple/infer`, { method: "POST", body: simple });
    expect(await spawned.stop()).toBe(0);
    const written = JSON.parse(readFileSync(file, "utf8"));
    expect(written.traceEvents.some((e: Event) => e.cat === "execution")).toBe(true);
  });
});
