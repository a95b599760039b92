import { afterEach, describe, expect, it } from "vitest";
import { connect } from "node:net";
import type { Socket } from "node:net";
import { readFileSync } from "node:fs";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";

// Clients that send slowly, never read, or open connections without end, against the CLI in its
// own process on node:http, where the adapter holds the sockets: under Node, Deno, and Bun with
// `--http-server node` (Bun.serve, Bun's default, holds its own).

let server: SpawnedServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.stop();
  server = undefined;
});

async function start(...flags: string[]): Promise<SpawnedServer> {
  const httpServer = TARGET_RUNTIME === "bun" ? ["--http-server", "node"] : [];
  const command = cliEntry(TARGET_RUNTIME, ["serve", "--repo", tempRepository("simple", "simple_identity"), "--port", "0", ...httpServer, ...flags]);
  return await spawnServer(command[0], command[1], { timeoutMs: 90_000 });
}

const SIMPLE = JSON.stringify({
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array(16).fill(1) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array(16).fill(2) },
  ],
});

async function simple(path = "/v2/models/simple/infer"): Promise<number> {
  const response = await fetch(`${server!.url}${path}`, path.endsWith("infer") ? { method: "POST", body: SIMPLE, headers: { "content-type": "application/json" } } : {});
  await response.arrayBuffer();
  return response.status;
}

/** A raw connection to the server; resolves once connected. */
function open(): Promise<Socket> {
  const { hostname, port } = new URL(server!.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
    sockets.push(socket);
  });
}

/** Everything the server sends on `socket` until it closes it (resolves with the text). */
function untilClosed(socket: Socket): Promise<string> {
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
  return new Promise((resolve) => socket.once("close", () => resolve(text)));
}

/** `tensorfn_connections_dropped_total` on the server's /metrics. */
async function dropped(): Promise<number> {
  const text = await (await fetch(`${server!.url}/metrics`)).text();
  return Number(/^tensorfn_connections_dropped_total (\d+)$/m.exec(text)?.[1] ?? NaN);
}

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function rssMiB(pid: number): number {
  return (Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * 4096) / 2 ** 20;
}

describe(`connection bounds (${TARGET_RUNTIME})`, () => {
  // Bun's node:http does not hold a request to Node's requestTimeout and headersTimeout (the stalled
  // request waited past 60 s): there connection-limits.ts's sweep does.
  it("answers a body sent a byte at a time, and a head a line at a time, 408 once --request-body-timeout passes, and closes them; other clients are served meanwhile", { timeout: 60_000 }, async () => {
    server = await start("--request-body-timeout", "2");
    const slow = await open();
    const answer = untilClosed(slow);
    slow.write(`POST /v2/models/simple/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${SIMPLE.length}\r\n\r\n`);
    // And one whose head never ends: a header line every 100 ms.
    const slowHead = await open();
    const headAnswer = untilClosed(slowHead);
    slowHead.write("POST /v2/models/simple/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    let sent = 0;
    const drip = setInterval(() => {
      if (!slow.destroyed && sent < SIMPLE.length) slow.write(SIMPLE[sent++]!);
      if (!slowHead.destroyed) slowHead.write(`X-Drip-${sent}: 1\r\n`);
    }, 100);
    for (let i = 0; i < 10; i++) expect(await simple()).toBe(200);
    const [text, headText] = await Promise.all([answer, headAnswer]);
    clearInterval(drip);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(headText).toMatch(/^HTTP\/1\.1 408 /);
    // Cut by the timeout, not ended by the client: the drip had sent less than half the body (it
    // needs a byte per 100 ms for ~40 s; Node's own default waits 300 s). Bounded by what the test
    // controls, not by a wall-clock figure a loaded machine can miss.
    expect(sent).toBeLessThan(SIMPLE.length / 2);
  });

  it("drops a client that never reads its answers once --write-timeout passes, and gives their memory back", { timeout: 60_000 }, async () => {
    server = await start("--write-timeout", "2", "--max-elements", "64M");
    const pid = server.child.pid!;
    const elements = 4 << 20; // 16 MB of BYTES in, 16 MB out, per request
    const header = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, elements], parameters: { binary_data_size: elements * 4 } }], outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }] });
    const request = Buffer.concat([
      Buffer.from(`POST /v2/models/simple_identity/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nInference-Header-Content-Length: ${header.length}\r\nContent-Length: ${header.length + elements * 4}\r\n\r\n${header}`),
      Buffer.alloc(elements * 4),
    ]);
    expect(await simple()).toBe(200);
    // Rounds of six clients that never read (the answer stays in the server's buffers): each round's
    // connections are dropped, and the next round reuses the memory they held instead of adding to it.
    const rss: number[] = [];
    for (let round = 1; round <= 3; round++) {
      for (let i = 0; i < 6; i++) {
        const socket = await open();
        socket.pause();
        socket.write(request);
      }
      await until(async () => (await dropped()) === 6 * round, 20_000);
      expect(await simple()).toBe(200);
      // The full collection that follows the round's last drop runs 0.1–2 s after it
      // (collect-after-release.ts: at most one every 2 s), later on a loaded machine: from the third
      // round on, RSS is read until it is back within the bound or 6 s have passed (CI once read
      // 205, 201, 360 MiB after a fixed 0.5 s).
      await new Promise((r) => setTimeout(r, 500));
      if (round === 3 && TARGET_RUNTIME !== "deno") {
        const deadline = performance.now() + 6_000;
        while (rssMiB(pid) - rss[1]! >= 100 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      }
      rss.push(rssMiB(pid));
    }
    // Pinned, each round would add 6 × 16 MB of answers and more: ~150 MB a round here. Measured from
    // the second round: the first also grows the allocator's arenas, by 0–140 MB under CI's load.
    // Deno drops them too (awaited above) but gives the memory back later than this test looks:
    // 633, 560, 741 MiB after its three rounds (Deno 2.9).
    if (TARGET_RUNTIME !== "deno") expect(rss[2]! - rss[1]!, `RSS after each round: ${rss.map((r) => r.toFixed(0)).join(", ")} MiB`).toBeLessThan(100);
    // Eighteen drops, logged as a line per 10 s window and the count of the rest when it closes.
    const logged = () => {
      const output = server!.output();
      const lines = output.match(/dropped a connection from .*untaken for \d+ s \(--write-timeout\)/g)?.length ?? 0;
      const held = [...output.matchAll(/… and (\d+) more like it in the last 10 s/g)].reduce((sum, m) => sum + Number(m[1]), 0);
      return { lines, held };
    };
    await until(async () => logged().lines + logged().held === 18, 15_000);
    expect(logged().lines).toBeLessThanOrEqual(2); // the rounds span one or two windows
  });

  it("answers connections past --max-connections 503 with Retry-After while health probes pass, and serves again once they close", { timeout: 60_000 }, async () => {
    server = await start("--max-connections", "8");
    const idle = await Promise.all(Array.from({ length: 8 }, () => open()));
    // Until the server has taken all eight (each accept is a turn of its loop): polled on a new
    // connection each time, not slept on.
    const statusOnNewConnection = async () => {
      const socket = await open();
      const text = untilClosed(socket);
      socket.write(`POST /v2/models/simple/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${SIMPLE.length}\r\n\r\n${SIMPLE}`);
      return Number(/^HTTP\/1\.1 (\d+)/.exec(await text)?.[1]);
    };
    await until(async () => (await statusOnNewConnection()) === 503, 5_000);
    const over = await fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body: SIMPLE, headers: { "content-type": "application/json" } });
    expect(over.status).toBe(503);
    expect(over.headers.get("retry-after")).toBe("1");
    expect((await over.json()).error).toMatch(/8 connections open, its limit \(--max-connections\)/);
    expect(await simple("/v2/health/ready")).toBe(200);
    expect(await simple("/v2/health/live")).toBe(200);
    for (const socket of idle) socket.destroy();
    await until(async () => (await simple()) === 200, 5_000);
  });
});
