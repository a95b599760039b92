import { afterEach, describe, expect, it, vi } from "vitest";
import { parseDocument } from "yaml";
import { Pool } from "undici";
import { appendFileSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FUNCTIONS, inProcess, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";
import type { WorkerHandle } from "../../runtime/core/mod.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const simpleBody = JSON.stringify({
  inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })),
});

async function infer(url: string, model: string) {
  const res = await fetch(`${url}/v2/models/${model}/infer`, { method: "POST", body: simpleBody });
  return { status: res.status, body: await res.json() };
}

async function index(url: string): Promise<{ name: string; version?: string; state: string; reason: string }[]> {
  return await (await fetch(`${url}/v2/repository/index`, { method: "POST" })).json();
}

const stateOf = async (url: string, name: string) => (await index(url)).filter((r) => r.name === name).map((r) => r.state);

describe("lifecycle through the real server", () => {
  it.runIf(inProcess)("replaces an onnxruntime worker thread that dies, and keeps serving", async () => {
    // Node's threads, with a way to end one as a crash would: the thread stops and its exit is reported.
    const base = createNodePlatform();
    const crashes: (() => Promise<void>)[] = [];
    const startWorker = (module: URL): WorkerHandle => {
      const handle = base.startWorker!(module);
      let reportExit: (reason: string) => void = () => {};
      crashes.push(async () => {
        await handle.terminate();
        reportExit("exited with code 1");
      });
      return { ...handle, onExit: (handler) => void ((reportExit = handler), handle.onExit(handler)) };
    };
    // `simple` is cheap enough for `auto` to run it on the event loop: ask for the worker thread.
    const repository = tempRepository("simple");
    appendFileSync(join(repository, "simple", "function.yaml"), "parameters: { execution_thread: { string_value: worker } }\n");
    server = await startServer({ repository, platform: { ...base, log: { info() {}, warn() {}, error() {} }, startWorker } });
    expect((await infer(server.url, "simple")).status).toBe(200);
    await Promise.all(crashes.map((crash) => crash())); // every ORT thread, the pool's idle one too
    const answers = await Promise.all([1, 2, 3].map(() => infer(server!.url, "simple")));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers[0]!.body.outputs[0].data).toEqual(Array.from({ length: 16 }, (_, i) => 2 * i));
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/tensorfn_lifecycle_events_total\{model="simple",version="1",event="restart",reason="crashed"\} 1/);
  });

  it("answers the first request to a cold function (lazy mode) and shows its state in the index", async () => {
    server = await startServer({ repository: tempRepository("simple", "mlp") });
    expect(await stateOf(server.url, "simple")).toEqual(["UNAVAILABLE"]);
    expect((await fetch(`${server.url}/v2/models/simple/ready`)).status).toBe(200);
    const { status, body } = await infer(server.url, "simple");
    expect(status).toBe(200);
    expect(body.outputs[0].data[3]).toBe(6);
    expect(await stateOf(server.url, "simple")).toEqual(["READY"]);
    expect(await stateOf(server.url, "mlp")).toEqual(["UNAVAILABLE"]);
  });

  it.runIf(inProcess)("parks a function after its idle timeout and brings it back on the next request", async () => {
    const clock = new FakeClock();
    server = await startServer({ repository: tempRepository("simple"), clock, idleTimeoutMs: 60_000 });
    expect((await infer(server.url, "simple")).status).toBe(200);
    clock.advance(60_000);
    // Parking drains the queue and stops the worker thread: watch the index until it says so.
    for (let i = 0; i < 200 && (await stateOf(server.url, "simple"))[0] !== "PARKED"; i++) await new Promise((r) => setImmediate(r));
    expect(await stateOf(server.url, "simple")).toEqual(["PARKED"]);
    const { model_stats } = await (await fetch(`${server.url}/v2/models/simple/stats`)).json();
    expect(model_stats[0]).toMatchObject({ state: "PARKED", instance_count: 0 });
    expect((await infer(server.url, "simple")).status).toBe(200);
    expect(await stateOf(server.url, "simple")).toEqual(["READY"]);
  });

  it("parks on request through the repository API (POST …/park)", async () => {
    server = await startServer({ repository: tempRepository("simple") });
    await infer(server.url, "simple");
    const res = await fetch(`${server.url}/v2/repository/models/simple/park`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(await stateOf(server.url, "simple")).toEqual(["PARKED"]);
    expect((await infer(server.url, "simple")).status).toBe(200);
  });

  it.runIf(inProcess)("a keep-alive connection outlives the versions it calls: twelve wakes on one connection leave no listeners behind", async () => {
    // Each wake makes a new batcher; a request that waits in one (the second of two sent at once) listens to
    // its connection's close.
    const repository = tempRepository("simple");
    delayed(repository, "simple");
    server = await startServer({ repository });
    const listening = await abortListenersAfter(server.url, async (connection) => {
      for (let wake = 0; wake < 12; wake++) {
        const park = await connection.request({ path: "/v2/repository/models/simple/park", method: "POST" });
        await park.body.dump();
        expect(park.statusCode).toBe(200);
        await twoAtOnce(connection, "simple");
      }
    });
    // The first wakes' requests wait in their batcher (until the connection count is trusted: client-connections.ts),
    // each listening to the connection's close; every parked batcher took its listener off (a leak leaves 4 here).
    expect(Math.max(0, ...listening)).toBeLessThanOrEqual(1);
  });

  it.runIf(inProcess)("one keep-alive connection may wait in the batchers of many live functions without a leak warning", async () => {
    const repository = tempRepository();
    const names = Array.from({ length: 12 }, (_, i) => `simple_${i}`);
    for (const name of names) {
      cpSync(join(FUNCTIONS, "simple"), join(repository, name), { recursive: true });
      delayed(repository, name);
    }
    server = await startServer({ repository });
    const warnings = await warningsWhile(server.url, async (connection) => {
      for (const name of names) await twoAtOnce(connection, name);
    });
    expect(warnings).toEqual([]);
  });

  it.runIf(inProcess)("keeps onnxruntime's optimised form of a parked model and wakes from it, answering the same", async () => {
    const lines: string[] = [];
    const base = createNodePlatform();
    server = await startServer({ repository: tempRepository("mlp"), platform: { ...base, log: { info: (m) => void lines.push(m), warn() {}, error() {} } } });
    const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [2, 512], data: Array.from({ length: 1024 }, (_, i) => Math.cos(i)) }] });
    const answer = async () => (await (await fetch(`${server!.url}/v2/models/mlp/infer`, { method: "POST", body })).json()).outputs[0].data;
    const before = await answer();
    for (let wake = 0; wake < 2; wake++) {
      expect((await fetch(`${server.url}/v2/repository/models/mlp/park`, { method: "POST" })).status).toBe(200);
      expect(await answer()).toEqual(before);
    }
    const said = lines.filter((l) => l.startsWith("mlp v1: "));
    expect(said.filter((l) => l.includes("optimised"))).toEqual([
      "mlp v1: keeps its optimised model (12.6 MB) to wake from",
      expect.stringMatching(/READY on cpu in \d+ ms \(from PARKED, its optimised model\)$/),
      expect.stringMatching(/READY on cpu in \d+ ms \(from PARKED, its optimised model\)$/),
    ]);
    // The bundled mlp wakes with its weights where they lie in the kept form (the answers above are the same).
    const config = await (await fetch(`${server.url}/v2/models/mlp/config`)).json();
    expect(config.parameters.weights_in_place).toEqual({ string_value: "true" });
  });

  it.runIf(inProcess)("with wake_unpacked, a wake answers at once from an unpacked session (the same up to rounding), then the same bits as before", async () => {
    const repository = tempRepository("mlp");
    const file = join(repository, "mlp", "function.yaml");
    const config = parseDocument(readFileSync(file, "utf8"));
    config.setIn(["parameters", "wake_unpacked"], true);
    config.setIn(["parameters", "execution_thread"], "main");
    writeFileSync(file, String(config));
    server = await startServer({ repository });
    const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [2, 512], data: Array.from({ length: 1024 }, (_, i) => Math.cos(i)) }] });
    const answer = async (): Promise<number[]> => (await (await fetch(`${server!.url}/v2/models/mlp/infer`, { method: "POST", body })).json()).outputs[0].data;
    const before = await answer();
    expect((await fetch(`${server.url}/v2/repository/models/mlp/park`, { method: "POST" })).status).toBe(200);
    const first = await answer();
    first.forEach((value, i) => expect(value).toBeCloseTo(before[i]!, 6));
    // Once the prepacked session has taken over, the answer is the same as before the park, bit for bit.
    await vi.waitFor(async () => expect(await answer()).toEqual(before));
    const effective = await (await fetch(`${server.url}/v2/models/mlp/config`)).json();
    expect(effective.parameters.wake_unpacked).toEqual({ string_value: "true" });
  });

  it.runIf(inProcess)("makes no optimised form under a host memory budget, nor where sessions could not read it in place, and parks fine when it cannot write one", async () => {
    // A budget's accounting would not see the session that makes the form; without a plain view of
    // shared memory (no native addon) every session would hold a copy of the form.
    const unwritable = async () => ({ path: "/nonexistent-tensorfn/dir/model.ort", remove: async () => {} });
    const setups = [{ budgets: { host: 200 * 1024 * 1024 } }, { plainView: undefined }, { scratchPath: unwritable }];
    for (const { budgets, ...overrides } of setups) {
      const lines: string[] = [];
      const platform = { ...createNodePlatform(), log: { info: (m: string) => void lines.push(m), warn() {}, error() {} }, ...overrides };
      server = await startServer({ repository: tempRepository("mlp"), platform, budgets });
      const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: new Array(512).fill(0.5) }] });
      for (let i = 0; i < 2; i++) {
        expect((await fetch(`${server.url}/v2/models/mlp/infer`, { method: "POST", body })).status).toBe(200);
        expect((await fetch(`${server.url}/v2/repository/models/mlp/park`, { method: "POST" })).status).toBe(200);
      }
      expect(lines.filter((l) => l.startsWith("mlp v1: READY"))).toEqual([expect.stringMatching(/ms$/), expect.stringMatching(/\(from PARKED\)$/)]);
      await server.close();
      server = undefined;
    }
  });

  it("parks the least recently used function when a third would not fit the host memory budget", async () => {
    // Each mlp copy is 12.6 MB: READY ≈ 25 MB (bytes + one session), PARKED ≈ 12.6 MB.
    const repo = tempRepository("mlp");
    for (const name of ["mlp_b", "mlp_c"]) cpSync(join(repo, "mlp"), join(repo, name), { recursive: true });
    server = await startServer({ repository: repo, budgets: { host: 65 * 1024 * 1024 } });
    const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: new Array(512).fill(0.1) }] });
    for (const name of ["mlp", "mlp_b", "mlp_c"]) {
      const res = await fetch(`${server.url}/v2/models/${name}/infer`, { method: "POST", body });
      expect(res.status).toBe(200);
    }
    expect((await index(server.url)).map((r) => [r.name, r.state])).toEqual([
      ["mlp", "PARKED"],
      ["mlp_b", "READY"],
      ["mlp_c", "READY"],
    ]);
  });

  it("swaps versions under concurrent load with zero failed requests, old version then new per client", async () => {
    const repo = tempRepository("simple");
    server = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["simple"] });
    const seen: string[][] = Array.from({ length: 8 }, () => []);
    const failures: unknown[] = [];
    let swapped = false;
    let afterSwap = 0;
    const client = async (i: number) => {
      while (!swapped || afterSwap < 200) {
        const { status, body } = await infer(server!.url, "simple");
        if (status !== 200) failures.push(body);
        else seen[i]!.push(body.model_version);
        if (swapped) afterSwap++;
      }
    };
    const clients = seen.map((_, i) => client(i));
    while (seen.flat().length < 200) await new Promise((resolve) => setImmediate(resolve));
    cpSync(join(repo, "simple", "1"), join(repo, "simple", "2"), { recursive: true });
    const load = await fetch(`${server.url}/v2/repository/models/simple/load`, { method: "POST" });
    expect(load.status).toBe(200);
    swapped = true;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(seen.flat().length).toBeGreaterThan(400);
    for (const versions of seen) expect(versions).toEqual([...versions].sort());
    expect(seen.flat()).toContain("1");
    expect(seen.flat().filter((v) => v === "2").length).toBeGreaterThan(100);
    expect((await index(server.url)).filter((r) => r.name === "simple")).toEqual([{ name: "simple", version: "2", state: "READY", reason: "" }]);
  });

  it("keeps the old version serving when a corrupt new one fails to load", async () => {
    const repo = tempRepository("simple");
    server = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["*"] });
    writeFileSync(join(repo, "simple", "1", "model.onnx"), "not an onnx model");
    const load = await fetch(`${server.url}/v2/repository/models/simple/load`, { method: "POST" });
    expect(load.status).toBe(400);
    expect((await load.json()).error).toMatch(/failed to load 'simple'/);
    expect((await infer(server.url, "simple")).status).toBe(200);
    const [row] = await index(server.url);
    expect(row).toMatchObject({ name: "simple", state: "READY", reason: expect.stringMatching(/reload failed/) });
  });

  it("keeps the loaded version serving when a reload's function.yaml does not parse, and the load API says where", async () => {
    const repo = tempRepository("simple");
    server = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["*"] });
    const yaml = join(repo, "simple", "function.yaml");
    writeFileSync(yaml, readFileSync(yaml, "utf8").replace("max_batch_size: 8", "max_batch_size: 8\nmax_batch_sise: 4"));
    const load = await fetch(`${server.url}/v2/repository/models/simple/load`, { method: "POST" });
    expect(load.status).toBe(400);
    expect((await load.json()).error).toMatch(/failed to load 'simple': simple\/function\.yaml:\d+: max_batch_sise: unknown field/);
    expect((await infer(server.url, "simple")).status).toBe(200);
    expect((await index(server.url))[0]).toMatchObject({ name: "simple", state: "READY" });
    // Fixed: the next load takes it.
    writeFileSync(yaml, readFileSync(yaml, "utf8").replace("max_batch_size: 8\nmax_batch_sise: 4", "max_batch_size: 4"));
    expect((await fetch(`${server.url}/v2/repository/models/simple/load`, { method: "POST" })).status).toBe(200);
    expect((await (await fetch(`${server.url}/v2/models/simple/config`)).json()).max_batch_size).toBe(4);
  });

  it("loads a function from a config override and base64 model file, and unloads it", async () => {
    server = await startServer({ repository: tempRepository("simple"), controlMode: "explicit" });
    const model = readFileSync(join(tempRepository("simple"), "simple", "1", "model.onnx")).toString("base64");
    const config = await (await fetch(`${server.url}/v2/models/simple/config`)).json().catch(() => undefined);
    expect(config).toMatchObject({ error: expect.stringMatching(/not loaded/) });
    const override = {
      name: "adder",
      max_batch_size: 8,
      input: [
        { name: "INPUT0", data_type: "TYPE_INT32", dims: [16] },
        { name: "INPUT1", data_type: "TYPE_INT32", dims: [16] },
      ],
      output: [{ name: "OUTPUT0", data_type: "TYPE_INT32", dims: [16] }],
    };
    const load = await fetch(`${server.url}/v2/repository/models/adder/load`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ parameters: { config: JSON.stringify(override), "file:1/model.onnx": model } }),
    });
    expect(load.status).toBe(200);
    const { status, body } = await infer(server.url, "adder");
    expect(status).toBe(200);
    // simpleBody sends 0..15 as both inputs: the sum, and only the output the override declares.
    expect(body.outputs).toEqual([{ name: "OUTPUT0", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => 2 * i) }]);
    const unload = await fetch(`${server.url}/v2/repository/models/adder/unload`, { method: "POST" });
    expect(unload.status).toBe(200);
    expect((await infer(server.url, "adder")).status).toBe(503);
  });
});

/** Gives a copy of `simple` a queue delay, so that a request sent beside another waits in its batcher. */
function delayed(repository: string, name: string): void {
  const yaml = join(repository, name, "function.yaml");
  writeFileSync(yaml, readFileSync(yaml, "utf8").replace("dynamic_batching: {}", "dynamic_batching: { max_queue_delay_microseconds: 500 }"));
}

/** Two `simple` requests at once on `connection`: the second waits in the batcher, listening to the connection's close. */
async function twoAtOnce(connection: Pool, name: string): Promise<void> {
  const body = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((input) => ({ name: input, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) });
  const answers = await Promise.all([0, 1].map(() => connection.request({ path: `/v2/models/${name}/infer`, method: "POST", body })));
  for (const answer of answers) {
    expect(answer.statusCode).toBe(200);
    await answer.body.dump();
  }
}

/**
 * How many abort listeners are left on each signal that got one while `use` talked to the (in-process)
 * server over one keep-alive connection: counted by watching EventTarget's methods meanwhile.
 */
async function abortListenersAfter(url: string, use: (connection: Pool) => Promise<void>): Promise<number[]> {
  const live = new Map<EventTarget, Set<unknown>>();
  const { addEventListener: add, removeEventListener: remove } = EventTarget.prototype;
  EventTarget.prototype.addEventListener = function (this: EventTarget, type: string, listener: unknown, options?: unknown) {
    if (type === "abort" && this instanceof AbortSignal) live.set(this, (live.get(this) ?? new Set()).add(listener));
    return add.call(this, type, listener as EventListener, options as AddEventListenerOptions);
  };
  EventTarget.prototype.removeEventListener = function (this: EventTarget, type: string, listener: unknown, options?: unknown) {
    if (type === "abort") live.get(this)?.delete(listener);
    return remove.call(this, type, listener as EventListener, options as EventListenerOptions);
  };
  const connection = new Pool(url, { connections: 1 });
  try {
    await use(connection);
    return [...live.values()].map((listeners) => listeners.size).filter((n) => n > 0);
  } finally {
    EventTarget.prototype.addEventListener = add;
    EventTarget.prototype.removeEventListener = remove;
    await connection.close();
  }
}

/** The process warnings emitted while `use` talks to the server over one keep-alive connection. */
async function warningsWhile(url: string, use: (connection: Pool) => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  const connection = new Pool(url, { connections: 1 });
  try {
    await use(connection);
    await new Promise((resolve) => setImmediate(resolve));
    return warnings;
  } finally {
    process.off("warning", onWarning);
    await connection.close();
  }
}
