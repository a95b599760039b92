import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync, cpSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Pool } from "undici";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";
import { FUNCTIONS } from "../../harness/repositories.ts";
import { NEGATE_CONFIG, buildNegate } from "../../models/negate.ts";

// `isolation: process` under the runtime TENSORFN_RUNTIME names, through the real CLI: a function
// built to crash in every way a process can (an exit, a native abort, a handler that never yields,
// a heap that grows past its cap) while `simple`, in the server's process, serves a steady load;
// and `simple` itself isolated, on onnxruntime in its own process.

const CRASHY = `import type { FunctionRequest, HandlerContext } from "tensorfn";
export function execute(requests: FunctionRequest[], ctx: HandlerContext) {
  ctx.log.info(\`\${requests.length} request(s)\`);
  if (requests[0]!.json<{ how?: string }>().how === "forge") {
    // A message forged in the server's tensor-lane protocol: a place a terabyte long.
    process.send!({ "\\u0000lane": 0, bytes: 2 ** 40, type: "Float32Array" });
    return new Promise(() => {});
  }
  if (requests[0]!.json<{ how?: string }>().how === "memory") {
    // 32 MB more every 5 ms, outside the JavaScript heap: only the server's cap can stop it (a
    // synchronous loop was stopped by V8 itself first, which proved nothing of the cap). Past the
    // cap in a few ticks: at 8 MB a tick, a loaded machine's late timers let handler_timeout_ms
    // answer first (504).
    const keep: Float64Array[] = [];
    const grow = () => {
      keep.push(new Float64Array(1 << 22).fill(1));
      setTimeout(grow, 5);
    };
    grow();
    return new Promise(() => {});
  }
  return requests.map((r) => {
    const { how } = r.json<{ how?: string }>();
    if (how === "exit") process.exit(3);
    if (how === "abort") process.abort();
    if (how === "loop") for (;;);
    return { pid: process.pid, env: process.env.TENSORFN_TEST_SLICE ?? null };
  });
}
`;

function repository(): string {
  const dir = tempRepository("simple");
  mkdirSync(join(dir, "crashy", "1"), { recursive: true });
  writeFileSync(join(dir, "crashy", "handler.ts"), CRASHY);
  writeFileSync(
    join(dir, "crashy", "function.yaml"),
    "backend: handler\nhandler: handler.ts\nhandler_timeout_ms: 2000\nisolation: { mode: process, max_memory: 256M, env: { TENSORFN_TEST_SLICE: MIG-test } }\n",
  );
  cpSync(join(FUNCTIONS, "simple"), join(dir, "simple_isolated"), { recursive: true });
  appendFileSync(join(dir, "simple_isolated", "function.yaml"), "isolation: process\n");
  cpSync(join(FUNCTIONS, "word_count"), join(dir, "word_count_isolated"), { recursive: true });
  // An isolated handler that calls another function through ctx.infer (which the server runs).
  mkdirSync(join(dir, "caller", "1"), { recursive: true });
  writeFileSync(join(dir, "caller", "function.yaml"), "backend: handler\nhandler: handler.ts\nisolation: process\n");
  writeFileSync(
    join(dir, "caller", "handler.ts"),
    `import type { FunctionRequest, HandlerContext } from "tensorfn";
export async function execute(requests: FunctionRequest[], ctx: HandlerContext) {
  return await Promise.all(requests.map(async () => {
    const data = Int32Array.from({ length: 16 }, (_, i) => i);
    const out = await ctx.infer("simple", { INPUT0: { datatype: "INT32", shape: [1, 16], data }, INPUT1: { datatype: "INT32", shape: [1, 16], data } });
    const missing = await ctx.infer("nope", {}).catch((e: Error) => e.message);
    return { sum: Array.from(out.OUTPUT0!.data as Int32Array), missing };
  }));
}
`,
  );
  appendFileSync(join(dir, "word_count_isolated", "function.yaml"), "isolation: process\n");
  // Large tensors both ways: OUTPUT0 = -INPUT0, any length.
  mkdirSync(join(dir, "negate_isolated", "1"), { recursive: true });
  writeFileSync(join(dir, "negate_isolated", "1", "model.onnx"), buildNegate());
  writeFileSync(join(dir, "negate_isolated", "function.yaml"), `${NEGATE_CONFIG}isolation: process\n`);
  return dir;
}

const SIMPLE = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name, k) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i * (k + 1)) })) });

describe(`isolation: process (${TARGET_RUNTIME})`, () => {
  let server: SpawnedServer;
  let pool: Pool;
  beforeAll(async () => {
    // JSON log lines: the processes' own lines must follow the server's --log-format too.
    const [command, args] = cliEntry(TARGET_RUNTIME, ["serve", "--repo", repository(), "--port", "0", "--log-format", "json"]);
    server = await spawnServer(command, args, { timeoutMs: 90_000 });
    pool = new Pool(server.url, { connections: 8 });
  });
  afterAll(async () => {
    await pool?.close();
    await server?.stop();
  });

  const crashy = async (how: string) => {
    const res = await pool.request({ path: "/v1/functions/crashy", method: "POST", body: JSON.stringify({ how }) });
    return { status: res.statusCode, retryAfter: res.headers["retry-after"], body: (await res.body.json()) as { pid?: number; env?: string; error?: string } };
  };

  it("serves a model isolated in its own process, with the same answers", async () => {
    const res = await pool.request({ path: "/v2/models/simple_isolated/infer", method: "POST", body: SIMPLE });
    expect(res.statusCode).toBe(200);
    const outputs = ((await res.body.json()) as { outputs: { name: string; data: number[] }[] }).outputs;
    expect(outputs.find((o) => o.name === "OUTPUT0")!.data).toEqual(Array.from({ length: 16 }, (_, i) => 3 * i));
  });

  it("moves large tensors both ways through its /dev/shm lane (Linux), bit for bit, and those larger than the lane over IPC", async () => {
    // 400 KB and 4 MB through the lane; 12 MB is over its 8 MiB and crosses the IPC channel.
    for (const n of [100_000, 1_000_000, 3_000_000]) {
      const data = Float32Array.from({ length: n }, (_, i) => (i % 1000) * 0.25 - 7);
      const header = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [n], parameters: { binary_data_size: n * 4 } }], outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }] });
      const res = await pool.request({
        path: "/v2/models/negate_isolated/infer",
        method: "POST",
        headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(header.length) },
        body: Buffer.concat([Buffer.from(header), Buffer.from(data.buffer)]),
      });
      expect(res.statusCode, `${n} elements`).toBe(200);
      const body = Buffer.from(await res.body.arrayBuffer());
      const binary = body.subarray(Number(res.headers["inference-header-content-length"]));
      expect(binary.length).toBe(n * 4);
      const expected = data.map((v) => -v);
      expect(binary.equals(Buffer.from(expected.buffer)), `${n} elements`).toBe(true);
    }
    // The model's process holds the lane: an unlinked file in /dev/shm as its fd 4.
    const children = readFileSync(`/proc/${server.pid}/task/${server.pid}/children`, "utf8").trim().split(/\s+/).map(Number);
    const lanes = children.map((pid) => {
      try {
        return { pid, link: readlinkSync(`/proc/${pid}/fd/4`) };
      } catch {
        return { pid, link: "" };
      }
    });
    const lane = lanes.find(({ link }) => /^\/dev\/shm\/tensorfn-lane-.* \(deleted\)$/.test(link));
    expect(lane, lanes.map((l) => l.link).join(", ")).toBeDefined();
    // And the tensors went through it: a tensor of its own, then its bytes both ways are found in the
    // lane's rings (over the IPC channel alone they would never be there).
    const marked = Float32Array.from({ length: 50_000 }, (_, i) => 1234.5 + i * 0.001);
    const header = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [marked.length], parameters: { binary_data_size: marked.byteLength } }], outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }] });
    const res = await pool.request({ path: "/v2/models/negate_isolated/infer", method: "POST", headers: { "inference-header-content-length": String(header.length) }, body: Buffer.concat([Buffer.from(header), Buffer.from(marked.buffer)]) });
    expect(res.statusCode).toBe(200);
    await res.body.arrayBuffer();
    // Each isolated function's process has a lane of its own: negate's is the one that holds them.
    const rings = lanes.filter(({ link }) => link.startsWith("/dev/shm/")).map(({ pid }) => readFileSync(`/proc/${pid}/fd/4`));
    expect(rings.some((r) => r.includes(Buffer.from(marked.buffer))), "the request's tensor in a lane").toBe(true);
    expect(rings.some((r) => r.includes(Buffer.from(marked.map((v) => -v).buffer))), "the answer's tensor in a lane").toBe(true);
  });

  it("serves an isolated handler whose ctx.metrics reach the server's /metrics", async () => {
    for (const text of ["one two", "three four five"]) {
      const res = await pool.request({ path: "/v1/functions/word_count_isolated", method: "POST", body: JSON.stringify({ text }) });
      expect(await res.body.json()).toMatchObject({ words: text.split(" ").length });
    }
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^word_count_words_count\{model="word_count_isolated"\} 2$/m);
    expect(metrics).toMatch(/^word_count_words_sum\{model="word_count_isolated"\} 5$/m);
    expect(metrics).toMatch(/^tensorfn_handler_calls_total\{model="word_count_isolated",version="1",step="initialize",outcome="ok"\} 1$/m);
  });

  it("runs an isolated handler's ctx.infer on the server, errors included", async () => {
    const res = await pool.request({ path: "/v1/functions/caller", method: "POST", body: "{}" });
    const body = (await res.body.json()) as { sum: number[]; missing: string };
    expect(res.statusCode).toBe(200);
    expect(body.sum).toEqual(Array.from({ length: 16 }, (_, i) => 2 * i));
    expect(body.missing).toMatch(/nope/);
  });

  it("contains an exit, a native abort, a blocked event loop, a blown memory cap and a forged message: the other function serves throughout, the crashed one again after each, every restart counted", async () => {
    // A steady load on `simple`, in the server's own process, the whole time.
    let stop = false;
    const outcomes = { ok: 0, failed: [] as string[] };
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (!stop) {
          const res = await pool.request({ path: "/v2/models/simple/infer", method: "POST", body: SIMPLE }).catch((e: Error) => e);
          if (res instanceof Error) outcomes.failed.push(res.message);
          else if (res.statusCode === 200) (await res.body.dump(), outcomes.ok++);
          else outcomes.failed.push(`${res.statusCode} ${await res.body.text()}`);
        }
      }),
    );
    // The load stops with the test, whatever fails in it: a loop left running after the server
    // stopped spun on refused connections for good and hung the whole run.
    try {
      await crashes();
    } finally {
      stop = true;
      await load;
    }
    expect(outcomes.failed).toEqual([]);
    expect(outcomes.ok).toBeGreaterThan(50);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^tensorfn_lifecycle_events_total\{model="crashy",version="1",event="restart",reason="crashed"\} 5$/m);
    expect(metrics).toMatch(/^tensorfn_handler_calls_total\{model="crashy",version="1",step="execute",outcome="ok"\} 6$/m);
    expect((await fetch(`${server.url}/v2/models/crashy/ready`)).status).toBe(200);
  }, 60_000);

  async function crashes() {
    const first = await crashy("ok");
    expect(first.status).toBe(200);
    expect(first.body.env).toBe("MIG-test"); // the function's own environment
    expect(first.body.pid).not.toBe(server.pid);
    const reasons: Record<string, RegExp> = {
      exit: /its process exited with code 3/,
      abort: /its process was killed by SIGABRT/,
      loop: /did not answer within handler_timeout_ms \+ 1000 ms \(a handler blocking its event loop\): killed/,
      memory: /exceeded its memory cap \(resident \d+ MiB > isolation\.max_memory 256 MiB\): killed/,
      // Linux, where the process has a tensor lane: the server refuses the place and stays.
      forge: /its process sent a malformed tensor-lane place \(0, 1099511627776 bytes, Float32Array\): killed/,
    };
    let pid = first.body.pid;
    for (const [how, reason] of Object.entries(reasons)) {
      const crash = await crashy(how);
      expect(crash.status, how).toBe(503);
      expect(crash.retryAfter).toBe("1");
      expect(crash.body.error).toMatch(/^function 'crashy v1': its process /);
      expect(crash.body.error).toMatch(reason);
      if (how === "exit") {
        // Only its own readiness flips, while it restarts.
        expect((await pool.request({ path: "/v2/models/crashy/ready", method: "GET" }).then(async (r) => (await r.body.dump(), r.statusCode)))).toBe(503);
        expect((await pool.request({ path: "/v2/models/simple/ready", method: "GET" }).then(async (r) => (await r.body.dump(), r.statusCode)))).toBe(200);
      }
      const again = await crashy("ok");
      expect(again.status, `after ${how}`).toBe(200);
      expect(again.body.pid).not.toBe(pid);
      pid = again.body.pid;
    }
  }

  it("the processes write their own log lines in the server's --log-format", async () => {
    expect((await crashy("log")).status).toBe(200);
    const lines = server.output().split("\n").filter((line) => line.includes(" process] "));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line), line).toMatchObject({ level: expect.any(String), message: expect.stringContaining(" process] ") });
  });

  it("stops the function's process when the function unloads, and when the server stops", async () => {
    const { pid } = (await crashy("ok")).body;
    expect(alive(pid!)).toBe(true);
    expect((await fetch(`${server.url}/v2/repository/models/crashy/unload`, { method: "POST" })).status).toBe(200);
    await until(() => !alive(pid!));
    const { pid: next } = (await crashy("ok")).body;
    await server.stop();
    await until(() => !alive(next!));
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}
