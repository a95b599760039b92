import { afterEach, describe, expect, it } from "vitest";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";

// A warm-up a config may ask for that would never end: bounded, and cancelled by unload, by a newer
// load and by a shutdown, through the CLI in its own process under Node, Bun and Deno.

let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function start(...flags: string[]): Promise<SpawnedServer> {
  const command = cliEntry(TARGET_RUNTIME, ["serve", "--repo", tempRepository("simple"), "--port", "0", "--model-control-mode", "explicit", "--load-model", "simple", ...flags]);
  server = await spawnServer(command[0], command[1], { timeoutMs: 90_000 });
  await server.waitFor(/simple v1: READY/, 60_000);
  return server;
}

const TENSOR = (name: string) => ({ name, data_type: "TYPE_INT32", dims: [16] });
/** Triton's JSON config of `simple` with a warm-up sample run `count` times. */
const warming = (count: number) =>
  JSON.stringify({
    max_batch_size: 8,
    input: [TENSOR("INPUT0"), TENSOR("INPUT1")],
    output: [TENSOR("OUTPUT0"), TENSOR("OUTPUT1")],
    model_warmup: [{ name: "forever", batch_size: 1, count, inputs: { INPUT0: { data_type: "TYPE_INT32", dims: [16], zero_data: true }, INPUT1: { data_type: "TYPE_INT32", dims: [16], zero_data: true } } }],
  });

async function post(path: string, body: object = {}, timeoutMs = 30_000): Promise<{ status: number; error?: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${server!.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
  const json = (await response.json()) as { error?: string };
  return { status: response.status, error: json.error, ms: performance.now() - started };
}

const load = (config?: string) => post("/v2/repository/models/simple/load", config ? { parameters: { config } } : {});

async function simple(): Promise<number> {
  const response = await fetch(`${server!.url}/v2/models/simple/infer`, {
    method: "POST",
    body: JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array(16).fill(1) })) }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe(`warm-up bounds (${TARGET_RUNTIME})`, () => {
  it("refuses a count over --max-warmup-runs with 400 naming the field and the flag", async () => {
    await start("--max-warmup-runs", "100");
    const refused = await load(warming(101));
    expect(refused.status).toBe(400);
    expect(refused.error).toMatch(/model_warmup\[0\]\.count: 101 is over the server's ceiling of 100 runs per warm-up sample \(--max-warmup-runs\)/);
  });

  it("ends a warm-up that runs past --load-timeout-secs with a 400 saying so, the version serving on", { timeout: 60_000 }, async () => {
    await start("--max-warmup-runs", "1000000000", "--load-timeout-secs", "2");
    const endless = await load(warming(1e9));
    expect(endless.status).toBe(400);
    expect(endless.error).toMatch(/model_warmup did not finish within 2 s \(--load-timeout-secs\): sample 'forever' had run \d+ of 1000000000 times on instance 1 of 1; lower its count/);
    expect(endless.ms).toBeLessThan(10_000);
    expect(await simple()).toBe(200); // the previous deployment kept serving
  });

  it("cancels a reload's endless warm-up on unload, and a newer load of the function is served at once", { timeout: 60_000 }, async () => {
    await start("--max-warmup-runs", "1000000000");
    const endless = load(warming(1e9));
    await server!.waitFor(/simple v1: accelerator|LOADING|reload/i, 5_000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1000));
    const unloaded = await post("/v2/repository/models/simple/unload");
    expect(unloaded.status).toBe(200);
    const cancelled = await endless;
    expect(cancelled.status).toBe(503);
    expect(cancelled.error).toMatch(/reloading 'simple' version 1 was cancelled by an unload/);
    // Nothing holds the load slot: the next load is served in the time a load takes.
    const again = await load();
    expect(again.status, again.error).toBe(200);
    expect(again.ms).toBeLessThan(10_000);
    expect(await simple()).toBe(200);

    // A newer load supersedes a reload still warming up.
    const second = load(warming(1e9));
    await new Promise((r) => setTimeout(r, 1000));
    const third = await load();
    expect(third.status, third.error).toBe(200);
    expect((await second).error).toMatch(/superseded by a newer load/);
  });

  it("exits 0 within the drain on SIGTERM during a warm-up, answering the load that waited", { timeout: 60_000 }, async () => {
    await start("--max-warmup-runs", "1000000000");
    const endless = load(warming(1e9));
    await new Promise((r) => setTimeout(r, 1000));
    const started = performance.now();
    const code = await server!.stop();
    const stopped = performance.now() - started;
    server = undefined;
    expect(code).toBe(0);
    expect(stopped).toBeLessThan(8_000);
    expect((await endless).status).toBe(503);
  });
});
