import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";

// A handler under `isolation: process` that turns on the server: it forges replies on the channel
// the runtime speaks over, and starts processes of its own. Through the CLI under Node, Bun and Deno.

const HOSTILE = `import type { FunctionRequest } from "tensorfn";
import { spawn } from "node:child_process";
import process from "node:process";
export function execute(requests: FunctionRequest[]) {
  const { how } = requests[0]!.json<{ how: string }>();
  // Replies for the ids around this call's own (ids count up from 1 per process): one of them is in flight.
  if (how === "forge-error") for (let id = 1; id < 50; id++) process.send!({ id, ok: false });
  if (how === "forge-status") for (let id = 1; id < 50; id++) process.send!({ id, ok: false, error: "forged", code: "INVALID_ARG", status: "teapot" });
  if (how === "forge-outputs") for (let id = 1; id < 50; id++) process.send!({ id, ok: true, outputs: { x: { datatype: "FP32", shape: [4], data: "no" } } });
  if (how.startsWith("forge")) return new Promise(() => {});
  if (how === "spawn") {
    const plain = spawn("sleep", ["1000"], { stdio: "ignore" });
    const detached = spawn("sleep", ["1001"], { stdio: "ignore", detached: true });
    plain.unref();
    detached.unref();
    return requests.map(() => ({ pids: [plain.pid, detached.pid] }));
  }
  if (how === "exit") process.exit(3);
  if (how === "abort") process.abort(); // no exit hook runs: the server's side finds what it left
  return requests.map(() => ({ pid: process.pid }));
}
`;

let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function start(): Promise<SpawnedServer> {
  const repo = tempRepository();
  mkdirSync(join(repo, "hostile", "1"), { recursive: true });
  writeFileSync(join(repo, "hostile", "handler.ts"), HOSTILE);
  writeFileSync(join(repo, "hostile", "function.yaml"), "backend: handler\nhandler: handler.ts\nhandler_timeout_ms: 5000\nisolation: process\n");
  const [command, args] = cliEntry(TARGET_RUNTIME, ["serve", "--repo", repo, "--port", "0"]);
  server = await spawnServer(command, args, { timeoutMs: 90_000 });
  return server;
}

async function hostile(how: string): Promise<{ status: number; body: { pids?: number[]; pid?: number; error?: string } }> {
  const response = await fetch(`${server!.url}/v1/functions/hostile`, { method: "POST", body: JSON.stringify({ how }), signal: AbortSignal.timeout(15_000) });
  return { status: response.status, body: (await response.json()) as { pids?: number[]; error?: string } };
}

/** Whether `pid` is a live process (a zombie is not). */
function alive(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

async function gone(pids: number[], ms = 5_000): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (pids.some(alive)) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

describe.runIf(existsSync("/proc/self/stat"))(`isolation: process holds its process to the protocol and takes what it started with it (${TARGET_RUNTIME})`, () => {
  it("kills and restarts a process that forges replies (an error without a code, a status that is not one, outputs that are not tensors): the request gets a 503 naming why, the server serves on", { timeout: 90_000 }, async () => {
    await start();
    const first = (await hostile("hello")).body.pid!;
    for (const how of ["forge-error", "forge-status", "forge-outputs"]) {
      const answer = await hostile(how);
      expect(answer.status, `${how}: ${JSON.stringify(answer.body)}`).toBe(503);
      expect(answer.body.error).toMatch(/function 'hostile v1': its process sent (a reply to no request in flight|an error reply|a run reply whose output) .*: killed; the requests it was running failed and it restarts/);
    }
    expect(server!.output()).not.toMatch(/ERR_HTTP_INVALID_STATUS_CODE|unhandled/i);
    const again = await hostile("hello");
    expect(again.status).toBe(200);
    expect(again.body.pid).not.toBe(first);
  });

  it("kills what a handler spawned, plain or detached, when its process crashes (an exit call, a native abort), when it unloads and when the server exits", { timeout: 90_000 }, async () => {
    await start();
    const crash = (await hostile("spawn")).body.pids!;
    expect(crash.every(alive)).toBe(true);
    expect((await hostile("exit")).status).toBe(503);
    expect(await gone(crash), `left running after a crash: ${crash.filter(alive)}`).toBe(true);

    // A native crash runs no hook in the process: the server kills its group and the children it saw.
    const aborted = (await hostile("spawn")).body.pids!;
    await new Promise((r) => setTimeout(r, 1500)); // the server looks at the process's children once a second
    expect((await hostile("abort")).status).toBe(503);
    expect(await gone(aborted), `left running after an abort: ${aborted.filter(alive)}`).toBe(true);

    const unload = (await hostile("spawn")).body.pids!;
    expect(unload.every(alive)).toBe(true);
    const unloaded = await fetch(`${server!.url}/v2/repository/models/hostile/unload`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(unloaded.status).toBe(200);
    expect(await gone(unload), `left running after an unload: ${unload.filter(alive)}`).toBe(true);

    const exit = (await hostile("spawn")).body.pids!;
    expect(exit.every(alive)).toBe(true);
    expect(await server!.stop()).toBe(0);
    server = undefined;
    expect(await gone(exit), `left running after the server exited: ${exit.filter(alive)}`).toBe(true);
  });
});
