import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Triton's rate limiter: `simple` and a copy of it each list resource R on their instances, and the
// server has one R, so their executions never overlap, whichever function they belong to.
let server: TestServer;
beforeAll(async () => {
  const repo = tempRepository("simple");
  cpSync(join(repo, "simple"), join(repo, "simple_b"), { recursive: true });
  for (const name of ["simple", "simple_b"]) {
    const file = join(repo, name, "function.yaml");
    writeFileSync(file, `${readFileSync(file, "utf8")}\ninstance_group: [{ count: 2, kind: KIND_CPU, rate_limiter: { resources: [{ name: R, count: 1 }], priority: 1 } }]\n`);
  }
  server = await startServer({ repository: repo, controlMode: "none", rateLimit: "execution_count", rateLimitResources: [{ name: "R", count: 1 }], traceRate: 1 });
});
afterAll(() => server.close());

const body = (k: number) =>
  JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i + k) })) });

describe("--rate-limit execution_count", () => {
  it("never runs two executions that need the single R at once, across functions, and answers every request", async () => {
    const responses = await Promise.all(
      Array.from({ length: 40 }, async (_, k) => {
        const res = await fetch(`${server.url}/v2/models/${k % 2 ? "simple_b" : "simple"}/infer`, { method: "POST", body: body(k) });
        return { status: res.status, sum: (await res.json()).outputs?.[0]?.data?.[0] };
      }),
    );
    expect(responses.map((r) => r.status)).toEqual(new Array(40).fill(200));
    expect(responses.map((r) => r.sum)).toEqual(Array.from({ length: 40 }, (_, k) => 2 * k));
    const trace = await (await fetch(`${server.url}/v2/trace?seconds=60`)).json();
    const runs = (trace.traceEvents as { cat?: string; ts: number; dur: number; pid: number }[])
      .filter((e) => e.cat === "execution")
      .sort((a, b) => a.ts - b.ts);
    expect(new Set(runs.map((r) => r.pid)).size).toBe(2); // both functions ran
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.ts).toBeGreaterThanOrEqual(runs[i - 1]!.ts + runs[i - 1]!.dur - 1); // 1 µs of rounding
  });

  it("shows each instance group's rate_limiter in the configuration", async () => {
    const config = await (await fetch(`${server.url}/v2/models/simple_b/config`)).json();
    expect(config.instance_group[0].rate_limiter).toEqual({ resources: [{ name: "R", global: false, count: 1 }], priority: 1 });
  });
});
