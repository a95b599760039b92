import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBench } from "../../adapters/bench/bench-command.ts";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";

/** Runs the command with stdout and stderr captured. */
async function bench(args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runBench(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), stderrIsTTY: false });
  return { code, stdout, stderr };
}

describe("tensorfn bench against the real server", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ grpc: true });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("measures `simple` at concurrency 1 and 4 and prints a JSON report with no errors", async () => {
    const run = await bench([server.url, "--model", "simple", "--concurrency", "1,4", "--duration", "300ms", "--warmup", "100ms", "--json"]);
    expect(run.stderr).toMatch(/^\[1\/2\] concurrency 1: .* infer\/s.*\n\[2\/2\] concurrency 4: /);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.config).toMatchObject({ model: "simple", levels: [1, 4], durationMs: 300 });
    expect(report.steps.map((s: { concurrency: number }) => s.concurrency)).toEqual([1, 4]);
    for (const step of report.steps) {
      expect(step.inferPerS).toBeGreaterThan(0);
      expect(step.errors).toBe(0);
      expect(step.latencyMs.p99).toBeGreaterThanOrEqual(step.latencyMs.p50);
      // The server's statistics fill the server columns: one row per run for one client; up to one per client
      // for four (simple batches whatever is queued when its instance computes).
      if (step.concurrency === 1) expect(step.server.avgBatchSize).toBe(1);
      else expect(step.server.avgBatchSize).toBeGreaterThanOrEqual(1);
      expect(step.server.avgBatchSize).toBeLessThanOrEqual(step.concurrency);
    }
  });

  it("sends inference over gRPC with -i grpc (metadata and statistics still over HTTP)", async () => {
    const before = (await (await fetch(`${server.url}/v2/models/simple/stats`)).json()) as { model_stats: { inference_count: number }[] };
    const run = await bench([server.url, "--model", "simple", "-i", "grpc", "--grpc-url", server.grpc!, "--concurrency", "2", "--duration", "300ms", "--warmup", "100ms", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.config).toMatchObject({ protocol: "grpc", grpcAddress: server.grpc, binary: true });
    expect(report.steps[0].errors).toBe(0);
    expect(report.steps[0].requests).toBeGreaterThan(0);
    const after = (await (await fetch(`${server.url}/v2/models/simple/stats`)).json()) as { model_stats: { inference_count: number }[] };
    expect(after.model_stats[0]!.inference_count - before.model_stats[0]!.inference_count).toBeGreaterThanOrEqual(report.steps[0].requests);
    const wrongPort = await bench([server.url, "--model", "simple", "-i", "grpc", "--grpc-url", "127.0.0.1:1", "--duration", "100ms"]);
    expect(wrongPort.code).toBe(1);
    expect(wrongPort.stderr).toMatch(/ModelInfer at 127\.0\.0\.1:1 with the benchmark request failed: gRPC UNAVAILABLE/);
    const bad = await bench([server.url, "--model", "simple", "-i", "udp"]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining("--protocol 'udp' is not one of http, grpc")]);
  });

  it("fails fast, naming the cause, for an unknown model and for bad arguments", async () => {
    const unknown = await bench([server.url, "--model", "nope", "--duration", "100ms"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/GET \/v2\/models\/nope: HTTP 404/);
    const tooBig = await bench([server.url, "--model", "simple", "--batch-size", "9"]);
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toContain("--batch-size 9 is over model 'simple''s max_batch_size of 8");
    expect(tooBig.stdout).toBe("");
  });
});

describe("tensorfn bench against a fake Triton", () => {
  /** Metadata, binary inference and cumulative statistics: 2 requests per execution, 100 µs queue each. */
  async function fakeTriton() {
    const seen = { infer: 0, headerLength: "", contentType: "" };
    const http = createServer((req, res) => {
      const json = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      req.resume().on("end", () => {
        if (req.url === "/v2/models/toy") return json(200, { name: "toy", inputs: [{ name: "X", datatype: "FP32", shape: [-1, 4] }] });
        if (req.url === "/v2/models/toy/infer") {
          seen.infer++;
          seen.headerLength = String(req.headers["inference-header-content-length"]);
          seen.contentType = String(req.headers["content-type"]);
          return json(200, { model_name: "toy", outputs: [] });
        }
        if (req.url === "/v2/models/toy/stats") {
          const n = seen.infer;
          const stat = (count: number, ns: number) => ({ count, ns });
          return json(200, {
            model_stats: [{ name: "toy", version: "1", inference_count: 3 * n, execution_count: n / 2, inference_stats: { success: stat(n, n * 1e6), fail: stat(0, 0), queue: stat(n, n * 1e5), compute_input: stat(n / 2, 0), compute_infer: stat(n / 2, n * 1e6), compute_output: stat(n / 2, 0) } }],
          });
        }
        json(404, { error: `no route ${req.url}` });
      });
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, seen, close: () => new Promise((r) => http.close(r)) };
  }

  it("sends the binary request and fills the server columns from the statistics diff", async () => {
    const fake = await fakeTriton();
    try {
      const run = await bench([fake.url, "--model", "toy", "--batch-size", "3", "--binary", "--duration", "200ms", "--warmup", "50ms"]);
      expect(run.code).toBe(0);
      expect(fake.seen.contentType).toBe("application/octet-stream");
      expect(Number(fake.seen.headerLength)).toBeGreaterThan(0);
      const row = run.stdout.split("\n")[3]!.trim().split(/\s+/);
      expect(row[0]).toBe("1");
      expect(Number(row[1])).toBeCloseTo(3 * Number(row[2]), 0); // infer/s = req/s × batch 3
      expect(row.slice(-3)).toEqual(["6.00", "100", "2000"]); // batch 3×2, queue 100 µs, 2 ms per execution
    } finally {
      await fake.close();
    }
  });
});
