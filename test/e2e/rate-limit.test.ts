import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { inProcess, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { FakeClock } from "../support/fake-clock.ts";

/** A repository with `simple_identity` limited as `rate_limit` says (a token per 1000 s: no refill during a test). */
function limitedRepository(rateLimit = "{ requests_per_second: 0.001, burst: 2, key_header: X-Api-Key }"): string {
  const repo = tempRepository("simple_identity");
  writeFileSync(
    join(repo, "simple_identity", "function.yaml"),
    `backend: identity
max_batch_size: 8
input: [{ name: INPUT0, data_type: TYPE_STRING, dims: [-1] }]
output: [{ name: OUTPUT0, data_type: TYPE_STRING, dims: [-1] }]
rate_limit: ${rateLimit}
`,
  );
  return repo;
}

const body = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 1], data: ["hi"] }] });

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function infer(key?: string): Promise<Response> {
  const headers: Record<string, string> = key ? { "x-api-key": key } : {};
  return fetch(`${server!.url}/v2/models/simple_identity/infer`, { method: "POST", body, headers });
}

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${server!.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  if (!line) throw new Error(`no series ${name}{${labels}}`);
  return Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("rate_limit", () => {
  it("answers 429 with Retry-After once a key's burst is spent, per key, and counts each refusal", async () => {
    server = await startServer({ repository: limitedRepository() });
    expect((await infer("tenant-a")).status).toBe(200);
    expect((await infer("tenant-a")).status).toBe(200);
    const refused = await infer("tenant-a");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(999);
    expect((await refused.json()).error).toMatch(/^rate limit exceeded for model 'simple_identity': rate_limit allows 0.001 requests per second per x-api-key \(burst 2\); retry in \d+ ms$/);
    // Another key, and requests without the header (one shared bucket), have their own buckets.
    expect((await infer("tenant-b")).status).toBe(200);
    expect((await infer()).status).toBe(200);
    expect((await infer()).status).toBe(200);
    expect((await infer()).status).toBe(429);

    const labels = 'model="simple_identity",version="1"';
    expect(await metric("tensorfn_rate_limit_rejections_total", labels)).toBe(2);
    expect(await metric("nv_inference_request_failure", `${labels},reason="REJECTED"`)).toBe(2);
    expect(await metric("nv_inference_request_success", labels)).toBe(5);
    const stats = await (await fetch(`${server.url}/v2/models/simple_identity/stats`)).json();
    expect(stats.model_stats[0].inference_stats.fail.count).toBe(2);
  });

  it("refuses before anything costs: a parked function stays parked", async () => {
    server = await startServer({ repository: limitedRepository("{ requests_per_second: 0.001, burst: 1 }") });
    expect((await infer()).status).toBe(200);
    expect((await fetch(`${server.url}/v2/repository/models/simple_identity/park`, { method: "POST" })).status).toBe(200);
    expect((await infer()).status).toBe(429);
    const index = await (await fetch(`${server.url}/v2/repository/index`, { method: "POST" })).json();
    expect(index).toEqual([{ name: "simple_identity", version: "1", state: "PARKED", reason: expect.any(String) }]);
    // Unknown functions and versions are still 404, not 429.
    expect((await fetch(`${server.url}/v2/models/simple_identity/versions/9/infer`, { method: "POST", body })).status).toBe(404);
  });

  it.runIf(inProcess)("admits again as the bucket refills", async () => {
    const clock = new FakeClock();
    server = await startServer({ repository: limitedRepository("{ requests_per_second: 2, burst: 1 }"), clock });
    expect((await infer()).status).toBe(200);
    const refused = await infer();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1"); // 500 ms, in whole seconds rounded up
    expect((await refused.json()).error).toMatch(/retry in 500 ms$/);
    clock.advance(499);
    expect((await infer()).status).toBe(429);
    clock.advance(1);
    expect((await infer()).status).toBe(200);
  });
});

describe("rate_limit with key_header, across keys", () => {
  it("caps all keys together: 100 requests with random keys get at most total_burst through", async () => {
    server = await startServer({ repository: limitedRepository("{ requests_per_second: 0.001, burst: 2, key_header: x-api-key }") });
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const response = await infer(`random-${i}`);
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    // Default total_burst: 10 × burst = 20.
    expect(statuses.filter((s) => s === 200).length).toBe(20);
    expect(statuses.filter((s) => s === 429).length).toBe(80);
  });
});
