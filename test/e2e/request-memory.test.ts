import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { TARGET_RUNTIME } from "../../harness/start-server.ts";

// Issue 10: bodies under --max-input-size whose contents multiply in memory once decoded. Each
// used to take the server to 2–4 GB (or abort it); now each is refused from its header, before
// its data is decoded. The server runs as its own process so its RSS is its own (/proc, Linux).
const MiB = 1024 * 1024;

let server: SpawnedServer;
beforeAll(async () => {
  const repo = tempRepository("simple", "simple_identity");
  mkdirSync(join(repo, "identity_int64", "1"), { recursive: true });
  writeFileSync(
    join(repo, "identity_int64", "function.yaml"),
    "backend: identity\nmax_batch_size: 8\ninput: [{ name: INPUT0, data_type: TYPE_INT64, dims: [-1] }]\noutput: [{ name: OUTPUT0, data_type: TYPE_INT64, dims: [-1] }]\n",
  );
  const args = ["serve", "--repo", repo, "--port", "0"];
  const [command, argv] =
    TARGET_RUNTIME === "bun"
      ? ["node_modules/.bin/bun", ["adapters/bun/main.ts", ...args]]
      : TARGET_RUNTIME === "deno"
        ? ["node_modules/.bin/deno", ["run", "-A", "--unstable-no-legacy-abort", "adapters/deno/main.ts", ...args]]
        : [process.execPath, ["adapters/node/bin.mjs", ...args]];
  server = await spawnServer(command, argv, { timeoutMs: 90_000 });
}, 120_000);
afterAll(async () => void (await server?.stop()));

/** Resident and peak resident memory of the server process, in MiB. */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${server.child.pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

async function post(model: string, body: Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) {
  const started = performance.now();
  const response = await fetch(`${server.url}/v2/models/${model}/infer`, { method: "POST", body, headers });
  return { status: response.status, error: ((await response.json()) as { error?: string }).error, ms: performance.now() - started };
}

/** A JSON body `{"inputs":[{…,"data":[<item>,<item>,…]}]}` built from bytes, never as a JS array. */
function jsonBody(head: string, item: string, count: number): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`${head}"data":[${`${item},`.repeat(count - 1)}${item}]}]}`);
}

async function stillServes() {
  const data = Array.from({ length: 16 }, (_, i) => i);
  const body = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data })) });
  const response = await fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body });
  expect(response.status).toBe(200);
  const { outputs } = (await response.json()) as { outputs: { name: string; data: number[] }[] };
  expect(outputs.find((o) => o.name === "OUTPUT0")!.data).toEqual(data.map((x) => 2 * x));
}

type Built = Uint8Array<ArrayBuffer> | { body: Uint8Array<ArrayBuffer>; headerLength: number };
const bodies: [string, string, () => Built][] = [
  // ~63 MB of 21 M empty strings: once 4 GB and a V8 abort.
  ["21 M empty BYTES strings in JSON", "simple_identity", () => jsonBody('{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,21000000],', '""', 21_000_000)],
  // The same body against a function that takes no BYTES: refused for its datatype alone.
  ["21 M empty BYTES strings in JSON, to an INT32 function", "simple", () => jsonBody('{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,21000000],', '""', 21_000_000)],
  ["30 M INT64 numbers in JSON", "identity_int64", () => jsonBody('{"inputs":[{"name":"INPUT0","datatype":"INT64","shape":[1,30000000],', "0", 30_000_000)],
  ["30 M INT64 numbers behind a shape that claims 1", "identity_int64", () => jsonBody('{"inputs":[{"name":"INPUT0","datatype":"INT64","shape":[1,1],', "0", 30_000_000)],
  [
    "15 M zero-length binary BYTES elements",
    "simple_identity",
    () => {
      const count = 15_000_000;
      const header = new TextEncoder().encode(JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, count], parameters: { binary_data_size: 4 * count } }] }));
      const body = new Uint8Array(header.length + 4 * count);
      body.set(header);
      return { body, headerLength: header.length };
    },
  ],
];

describe("a request's memory is bounded by the model and --max-elements, not by its contents", () => {
  it("refuses every amplification shape fast, keeps serving, and its memory stays bounded", async () => {
    await stillServes();
    const before = memory();
    for (const [what, model, build] of bodies) {
      const built = build();
      const answer =
        built instanceof Uint8Array
          ? await post(model, built)
          : await post(model, built.body, { "inference-header-content-length": String(built.headerLength) });
      expect([400, 413], `${what}: ${answer.error}`).toContain(answer.status);
      // Refused from its header: seconds at worst on a busy 2-core machine (sending 63 MB included),
      // where it used to freeze every client for 4–8 s or abort the process. bench/ measures speed.
      expect(answer.ms, what).toBeLessThan(15_000);
      console.log(`${what}: ${answer.status} in ${answer.ms.toFixed(0)} ms, RSS ${memory().rss.toFixed(0)} MiB: ${answer.error}`);
      await stillServes();
    }
    const after = memory();
    // The largest body is 64 MB; the server holds it, its text and the scan's cut-down header at
    // once, each refused request in turn: a few hundred MiB, where it used to be 2–4 GB.
    expect(after.peak - before.peak).toBeLessThan(600);
    // What stays resident after: Bun's allocator hands freed memory back lazily — the same code
    // left 155–348 MiB above the start in seven runs under Bun, 80–180 under Node. Deno's heap too:
    // 124–144 MiB in four runs here, 302 once in CI (570 MiB after a 627 MiB climb; peak bound held).
    expect(after.rss - before.rss).toBeLessThan(TARGET_RUNTIME === "node" ? 300 : 450);
    console.log(`server RSS ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MiB, peak ${before.peak.toFixed(0)} → ${after.peak.toFixed(0)} MiB`);
  }, 60_000);
});

describe("clients that abort their uploads", () => {
  /** Opens an upload of `Content-Length: 1000000`, sends its first bytes, and goes away. */
  const abortUpload = () =>
    new Promise<void>((resolve, reject) => {
      const { hostname, port } = new URL(server.url);
      const socket = connect(Number(port), hostname, () => {
        socket.write(`POST /v2/models/simple/infer HTTP/1.1\r\nHost: ${hostname}\r\nContent-Length: 1000000\r\n\r\n{"inputs":[`, () => {
          socket.destroy();
          resolve();
        });
      });
      socket.on("error", reject);
    });

  it("are logged as one line and a count per 10 s, however many, never as an internal error", async () => {
    await stillServes(); // loaded: a client that leaves while its function loads is only cancelled
    const from = server.output().length;
    const since = () => server.output().slice(from);
    const ABORTS = 40;
    for (let i = 0; i < ABORTS; i++) await abortUpload();
    await server.waitFor(/client aborted the request body/);
    await stillServes(); // and a request after them, so late lines would be seen
    expect(since().split("client aborted the request body").length - 1).toBe(1);
    // The rest are counted, and the count written when the window closes: none hidden unsaid.
    await server.waitFor(/and \d+ more like it in the last 10 s/, 15_000);
    const held = Number(/and (\d+) more like it/.exec(since())![1]);
    expect(held).toBe(ABORTS - 1);
    expect(server.output()).not.toMatch(/internal error/);
  }, 30_000);
});
