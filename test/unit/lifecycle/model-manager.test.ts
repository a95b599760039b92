import { describe, expect, it } from "vitest";
import { ModelManager } from "../../../runtime/lifecycle/mod.ts";
import type { ModelManagerOptions } from "../../../runtime/lifecycle/mod.ts";
import type { InferRequest, Tensor } from "../../../runtime/mod.ts";
import { MAX_ROW_SHARES, rowShares } from "../../../runtime/lifecycle/model-manager.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { FakeBackend, fakeModel } from "../../support/fake-backend.ts";
import { MemoryPlatform } from "../../support/memory-platform.ts";
import { ResourceLimiter } from "../../../runtime/scheduler/mod.ts";

const YAML = "max_batch_size: 4\n";

function setup(files: Record<string, string | Uint8Array>, options: Partial<ModelManagerOptions> = {}) {
  const platform = new MemoryPlatform(files);
  const backend = new FakeBackend();
  const clock = new FakeClock();
  const manager = new ModelManager({ platform, repository: "repo", backends: { onnxruntime: backend }, clock, controlMode: "lazy", ...options });
  return { platform, backend, clock, manager };
}

/** A repository of functions named after their k (y = x + k), each with version 1. */
function repo(...names: [string, number][]): Record<string, string | Uint8Array> {
  return Object.fromEntries(names.flatMap(([name, k]) => [[`repo/${name}/function.yaml`, YAML], [`repo/${name}/1/model.onnx`, fakeModel(k)]]));
}

const request = (x = 1): InferRequest => ({ parameters: {}, inputs: [{ name: "x", tensor: { datatype: "FP32", shape: [1, 1], data: Float32Array.of(x) } }] });
const answer = async (m: ModelManager, name: string, version?: string) =>
  (await m.infer(name, version, request())).outputs[0]!.tensor.data[0];
const state = (m: ModelManager, name: string) => m.index().filter((r) => r.name === name).map((r) => r.state);

describe("ModelManager", () => {
  describe("lazy mode", () => {
    it("registers every function without loading any, and reports them ready", async () => {
      const { manager, backend } = setup(repo(["a", 1], ["b", 2]));
      await manager.start();
      expect(backend.loads).toBe(0);
      expect(manager.index().map((r) => [r.name, r.state])).toEqual([["a", "UNAVAILABLE"], ["b", "UNAVAILABLE"]]);
      expect(manager.readiness("a").ready).toBe(true);
      expect(manager.unready()).toEqual([]);
    });

    it("`infer()` on a cold function loads it and answers; concurrent first requests share one load", async () => {
      const { manager, backend } = setup(repo(["a", 5]));
      await manager.start();
      backend.hold = true;
      const pending = [answer(manager, "a"), answer(manager, "a"), answer(manager, "a")];
      await new Promise((resolve) => setImmediate(resolve));
      expect(state(manager, "a")).toEqual(["LOADING"]);
      backend.release();
      expect(await Promise.all(pending)).toEqual([6, 6, 6]);
      expect(backend.loads).toBe(1);
      expect(state(manager, "a")).toEqual(["READY"]);
    });

    it("parks a function after its idle timeout and brings it back from host memory on the next request", async () => {
      const { manager, backend, clock, platform } = setup(repo(["a", 3]), { idleTimeoutMs: 1000 });
      await manager.start();
      expect(await answer(manager, "a")).toBe(4);
      clock.advance(999);
      expect(state(manager, "a")).toEqual(["READY"]);
      clock.advance(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(state(manager, "a")).toEqual(["PARKED"]);
      expect(backend.live).toBe(0);
      platform.remove("repo/a/1/model.onnx"); // proves the bytes come from memory, not the disk
      expect(await answer(manager, "a")).toBe(4);
      expect(state(manager, "a")).toEqual(["READY"]);
    });

    it("counts the idle timeout from the last request, without a timer set per request", async () => {
      const { manager, clock } = setup(repo(["a", 3]), { idleTimeoutMs: 1000 });
      await manager.start();
      await answer(manager, "a");
      const timers = clock.timersSet;
      for (let i = 0; i < 20; i++) {
        clock.advance(40);
        await answer(manager, "a");
      }
      // 800 ms of steady requests set no timer; the one armed at load still stands.
      expect(clock.timersSet).toBe(timers);
      clock.advance(400); // the first timer's deadline: idle only 400 ms, so it waits out the rest
      await new Promise((resolve) => setImmediate(resolve));
      expect(state(manager, "a")).toEqual(["READY"]);
      clock.advance(599);
      expect(state(manager, "a")).toEqual(["READY"]);
      clock.advance(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(state(manager, "a")).toEqual(["PARKED"]);
    });

    it("unloads instead of parking with `park: none`, and keeps serving on demand", async () => {
      const files = repo(["a", 3]);
      files["repo/a/function.yaml"] = "max_batch_size: 4\nscale: { idle_timeout_ms: 100, park: none }\n";
      const { manager, clock } = setup(files);
      await manager.start();
      await answer(manager, "a");
      clock.advance(100);
      await new Promise((resolve) => setImmediate(resolve));
      expect(state(manager, "a")).toEqual(["UNAVAILABLE"]);
      expect(await answer(manager, "a")).toBe(4);
    });

    it("retries a failed load on a later request, after a backoff that doubles (1 s, 2 s…), and serves once it loads", async () => {
      const files = repo(["a", 1]);
      files["repo/a/1/model.onnx"] = fakeModel(255); // corrupt
      const { manager, clock, platform, backend } = setup(files);
      await manager.start();
      await expect(answer(manager, "a")).rejects.toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/failed to load 'a'.*corrupt/) });
      const tries = backend.loads;
      // Within the backoff: refused at once, saying when a request may try again, nothing loaded.
      clock.advance(500);
      await expect(answer(manager, "a")).rejects.toMatchObject({ code: "UNAVAILABLE", retryAfterMs: 500, message: expect.stringMatching(/tried 1 time; a request after 1 s tries again/) });
      expect(backend.loads).toBe(tries);
      clock.advance(500);
      await expect(answer(manager, "a")).rejects.toMatchObject({ message: expect.stringMatching(/corrupt/) }); // the second try fails too
      clock.advance(1999);
      await expect(answer(manager, "a")).rejects.toMatchObject({ retryAfterMs: 1, message: expect.stringMatching(/tried 2 times/) });
      platform.write("repo/a/1/model.onnx", fakeModel(4)); // fixed
      clock.advance(1);
      expect(await answer(manager, "a")).toBe(5);
      expect(state(manager, "a")).toEqual(["READY"]);
    });

    it("leaves an unloaded function cold: its next request loads it, unless it was unloaded with `disable`", async () => {
      const { manager } = setup(repo(["a", 1], ["b", 2]));
      await manager.start();
      expect(await answer(manager, "a")).toBe(2);
      await manager.unload("a");
      expect(state(manager, "a")).toEqual(["UNAVAILABLE"]);
      expect(manager.readiness("a").ready).toBe(true);
      expect(await answer(manager, "a")).toBe(2);
      await manager.unload("b", { disable: true });
      await expect(answer(manager, "b")).rejects.toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/'b' was disabled \(unloaded with parameters\.disable\); load it first/) });
      await manager.load("b");
      expect(await answer(manager, "b")).toBe(3);
    });

    it("never idles out a function with min_instances ≥ 1", async () => {
      const files = repo(["a", 3]);
      files["repo/a/function.yaml"] = "max_batch_size: 4\nscale: { min_instances: 1, idle_timeout_ms: 100 }\n";
      const { manager, clock } = setup(files);
      await manager.start();
      await answer(manager, "a");
      clock.advance(10_000);
      expect(state(manager, "a")).toEqual(["READY"]);
    });
  });

  describe("model_warmup", () => {
    it("runs every sample `count` times on every instance before the version is READY", async () => {
      const files = repo(["a", 1]);
      files["repo/a/function.yaml"] = [
        "max_batch_size: 4",
        "instance_group: [{ count: 2, kind: KIND_CPU }]",
        "model_warmup: [{ name: zeros, batch_size: 2, count: 3, inputs: { x: { data_type: TYPE_FP32, dims: [1], zero_data: true } } }]",
        "",
      ].join("\n");
      const { manager, backend } = setup(files);
      await manager.start();
      await manager.acquire("a");
      expect(backend.runs).toBe(6);
    });

    it("fails the load, naming the sample, when a warm-up input does not fit the model", async () => {
      const files = repo(["a", 1]);
      files["repo/a/function.yaml"] = "max_batch_size: 4\nmodel_warmup: [{ name: bad, inputs: { nope: { data_type: TYPE_FP32, dims: [1], zero_data: true } } }]\n";
      const { manager } = setup(files);
      await manager.start();
      await expect(manager.acquire("a")).rejects.toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/model_warmup 'bad'/) });
      expect(manager.index()[0]!.state).toBe("FAILED");
    });
  });

  describe("autoscaling", () => {
    it("adds instances while in-flight requests exceed the target, up to max_instances, and removes them when idle", async () => {
      const files = repo(["a", 1]);
      files["repo/a/function.yaml"] = "max_batch_size: 4\nscale: { min_instances: 1, max_instances: 3, target_concurrency: 2 }\n";
      const { manager, backend, clock } = setup(files, { autoscaleIntervalMs: 2000 });
      await manager.start();
      await answer(manager, "a");
      const instances = () => manager.statistics("a")[0]!.instances;
      expect(instances()).toBe(1);
      backend.gateRuns = true;
      const burst = Array.from({ length: 8 }, () => answer(manager, "a"));
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(2000); // 8 in flight ÷ 2 per instance → panic → 3 (max)
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(instances()).toBe(3);
      backend.gateRuns = false;
      backend.finishRuns();
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        backend.finishRuns();
      }
      await Promise.all(burst);
      for (let t = 0; t < 130_000; t += 2000) {
        clock.advance(2000);
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(instances()).toBe(1);
    });
  });

  describe("memory budgets", () => {
    // Each fake model is 1000 bytes; READY holds the bytes plus one session (2000), PARKED 1000.
    it("parks the least recently used idle function to make room for a third", async () => {
      const { manager, clock } = setup(repo(["a", 1], ["b", 2], ["c", 3]), { budgets: { host: 5000 } });
      await manager.start();
      await answer(manager, "a");
      clock.advance(10);
      await answer(manager, "b");
      clock.advance(10);
      expect(await answer(manager, "c")).toBe(4);
      expect(manager.index().map((r) => r.state)).toEqual(["PARKED", "READY", "READY"]);
    });

    it("evicts parked functions when parking is not enough", async () => {
      // Parking both leaves 2000 held; c needs 2000 more: over 3500, so the older parked one goes.
      const { manager, clock } = setup(repo(["a", 1], ["b", 2], ["c", 3]), { budgets: { host: 3500 } });
      await manager.start();
      await answer(manager, "a");
      clock.advance(10);
      await answer(manager, "b");
      clock.advance(10);
      await answer(manager, "c");
      expect(manager.index().map((r) => r.state)).toEqual(["UNAVAILABLE", "PARKED", "READY"]);
      expect(manager.index()[0]!.reason).toMatch(/evicted to make room for 'c'/);
    });

    it("refuses with 503 naming the budget when nothing can make room", async () => {
      const { manager } = setup(repo(["a", 1]), { budgets: { host: 1500 } });
      await manager.start();
      await expect(answer(manager, "a")).rejects.toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/host-memory-budget/) });
    });
  });

  describe("server readiness: the functions the control mode loads", () => {
    it("explicit: waits only for --load-model functions and those loaded since; an unload on purpose is not waited for", async () => {
      const { manager } = setup(repo(["a", 1], ["b", 2]), { controlMode: "explicit", loadModels: ["a"] });
      await manager.start();
      expect(manager.unready()).toEqual([]); // b was never asked for
      await manager.load("b");
      expect(manager.unready()).toEqual([]);
      await manager.unload("a");
      expect(manager.unready()).toEqual([]);
    });

    it("explicit: a --load-model function that failed keeps the server not ready", async () => {
      const files = { ...repo(["a", 1]), "repo/broken/function.yaml": "max_batch_size: nope\n", "repo/broken/1/model.onnx": fakeModel(1) };
      const { manager } = setup(files, { controlMode: "explicit", loadModels: ["a", "broken"] });
      await manager.start();
      expect(manager.unready()).toEqual(["broken"]);
    });

    it("none: waits for every function, a broken one included; lazy: for none", async () => {
      const files = { ...repo(["a", 1]), "repo/broken/function.yaml": "max_batch_size: nope\n", "repo/broken/1/model.onnx": fakeModel(1) };
      const none = setup(files, { controlMode: "none" }).manager;
      await none.start();
      expect(none.unready()).toEqual(["broken"]);
      const lazy = setup(files, { controlMode: "lazy" }).manager;
      await lazy.start();
      expect(lazy.unready()).toEqual([]);
    });
  });

  describe("explicit mode and the repository API", () => {
    it("loads only what it is told to, and unload makes a function unavailable", async () => {
      const { manager } = setup(repo(["a", 1], ["b", 2]), { controlMode: "explicit", loadModels: ["a"] });
      await manager.start();
      expect(state(manager, "a")).toEqual(["READY"]);
      await expect(answer(manager, "b")).rejects.toMatchObject({ code: "UNAVAILABLE" });
      await manager.load("b");
      expect(await answer(manager, "b")).toBe(3);
      await manager.unload("a");
      expect(state(manager, "a")).toEqual(["UNAVAILABLE"]);
      await expect(answer(manager, "a")).rejects.toMatchObject({ code: "UNAVAILABLE" });
    });

    it("reloads a changed model in place, and a corrupt one leaves the old one serving", async () => {
      const { manager, platform } = setup(repo(["a", 1]), { controlMode: "explicit", loadModels: ["*"] });
      await manager.start();
      platform.write("repo/a/1/model.onnx", fakeModel(7));
      await manager.load("a");
      expect(await answer(manager, "a")).toBe(8);
      platform.write("repo/a/1/model.onnx", fakeModel(255));
      await expect(manager.load("a")).rejects.toMatchObject({ code: "INVALID_ARG", message: expect.stringMatching(/failed to load 'a'.*corrupt/) });
      expect(await answer(manager, "a")).toBe(8);
      expect(manager.index()[0]).toMatchObject({ state: "READY", reason: expect.stringMatching(/reload failed/) });
    });

    it("refuses load and unload in none mode", async () => {
      const { manager } = setup(repo(["a", 1]), { controlMode: "none" });
      await manager.start();
      await expect(manager.load("a")).rejects.toMatchObject({ code: "INVALID_ARG", message: expect.stringMatching(/control mode 'none'/) });
    });
  });

  describe("versions", () => {
    it("serves the highest version by default and answers 404 outside the policy", async () => {
      const files = { ...repo(["a", 1]), "repo/a/2/model.onnx": fakeModel(2) };
      const { manager } = setup(files, { controlMode: "none" });
      await manager.start();
      expect(await answer(manager, "a")).toBe(3);
      await expect(answer(manager, "a", "1")).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    it("polling picks up a new version, swaps to it once READY, then unloads the old one", async () => {
      const { manager, platform, backend } = setup(repo(["a", 1]), { controlMode: "poll", pollIntervalMs: 60_000 });
      await manager.start();
      expect(await answer(manager, "a")).toBe(2);
      platform.write("repo/a/2/model.onnx", fakeModel(2));
      await manager.poll();
      await new Promise((resolve) => setImmediate(resolve));
      expect(await answer(manager, "a")).toBe(3);
      expect(manager.versions("a")).toEqual(["2"]);
      expect(backend.live).toBe(1);
    });

    it("a lease runs on the deployment it found; taken before a reload, on the successor (looked up again by the name it was taken for)", async () => {
      const { manager, platform } = setup(repo(["a", 1]), { controlMode: "explicit", loadModels: ["*"] });
      await manager.start();
      const lease = await manager.leaseNow("a", undefined);
      expect((await lease.infer(request())).outputs[0]!.tensor.data[0]).toBe(2);
      platform.write("repo/a/1/model.onnx", fakeModel(7));
      await manager.load("a");
      // The leased deployment has closed: answering on it now refuses, the lease goes on to its successor.
      await expect(lease.deployment.infer(request())).rejects.toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/being unloaded/) });
      expect((await lease.infer(request())).outputs[0]!.tensor.data[0]).toBe(8);
      const streamed = [];
      for await (const response of lease.stream(request())) streamed.push(response.outputs[0]!.tensor.data[0]);
      expect(streamed).toEqual([8]);
    });

    it("`acquire()` with `admission` rate-limits on the same lookup, before any load: a refused request loads nothing", async () => {
      const files = repo(["a", 1]);
      files["repo/a/function.yaml"] = `${YAML}rate_limit: { requests_per_second: 0.001, burst: 1, key_header: x-tenant }\n`;
      const { manager, backend } = setup(files);
      await manager.start();
      const header = (tenant: string) => (name: string) => (name === "x-tenant" ? tenant : undefined);
      manager.admit("a", undefined, header("t1")); // t1's one token, taken without loading anything
      await expect(manager.acquire("a", undefined, { admission: header("t1") })).rejects.toMatchObject({ code: "RATE_LIMITED" });
      expect(backend.loads).toBe(0); // lazy mode: an admitted acquire would have loaded it
      await expect(manager.acquire("a", undefined, { admission: header("t2") })).resolves.toBeDefined();
      expect(backend.loads).toBe(1);
      await expect(manager.acquire("zzz", undefined, { admission: header("t1") })).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    it("keeps a rate limiter's buckets across a reload that leaves rate_limit alone, and starts afresh when it changes", async () => {
      const files = repo(["a", 1]);
      files["repo/a/function.yaml"] = `${YAML}rate_limit: { requests_per_second: 0.001, burst: 1 }\n`;
      const { manager, platform } = setup(files, { controlMode: "poll" });
      await manager.start();
      manager.admit("a", undefined);
      expect(() => manager.admit("a", undefined)).toThrow(expect.objectContaining({ code: "RATE_LIMITED" }));
      platform.write("repo/a/1/model.onnx", fakeModel(5)); // a new model, the same limit
      await manager.poll();
      expect(() => manager.admit("a", undefined)).toThrow(expect.objectContaining({ code: "RATE_LIMITED" }));
      platform.write("repo/a/function.yaml", `${YAML}rate_limit: { requests_per_second: 0.001, burst: 2 }\n`);
      await manager.poll();
      manager.admit("a", undefined);
      manager.admit("a", undefined);
      expect(() => manager.admit("a", undefined)).toThrow(expect.objectContaining({ code: "RATE_LIMITED" }));
    });

    it("reads a function.yaml again at the next poll when it changed while it was read (a write that truncates first)", async () => {
      const files = repo(["a", 1]);
      files["repo/a/function.yaml"] = `${YAML}rate_limit: { requests_per_second: 0.001, burst: 1 }\n`;
      const { manager, platform } = setup(files, { controlMode: "poll" });
      await manager.start();
      // The poll's read lands between the truncation and the write: it sees the file empty, and
      // the write lands before the registry looks at the file again.
      const final = `${YAML}rate_limit: { requests_per_second: 0.001, burst: 2 }\n`;
      platform.write("repo/a/function.yaml", "");
      const read = platform.readTextFile.bind(platform);
      platform.readTextFile = async (path: string) => {
        const text = await read(path);
        if (path === "repo/a/function.yaml" && text === "") platform.write(path, final);
        return text;
      };
      await manager.poll();
      await manager.poll();
      manager.admit("a", undefined);
      manager.admit("a", undefined);
      expect(() => manager.admit("a", undefined)).toThrow(expect.objectContaining({ code: "RATE_LIMITED" }));
    });

    it("replaces an instance whose thread died: the request on it fails, the next ones are served", async () => {
      const { manager, backend } = setup(repo(["a", 1]));
      await manager.start();
      expect(await answer(manager, "a")).toBe(2);
      backend.killNextRun = true;
      await expect(answer(manager, "a")).rejects.toMatchObject({ code: "INTERNAL" });
      expect(await Promise.all([answer(manager, "a"), answer(manager, "a")])).toEqual([2, 2]);
      expect(backend.loads).toBe(2);
      expect(backend.live).toBe(1); // the dead session was released
      expect(manager.metricsEntries()[0]!.stats.metrics().events).toContainEqual({ event: "restart", reason: "crashed", count: 1 });
    });

    it("replaces an instance whose thread died between requests before running on it: no request fails", async () => {
      const { manager, backend } = setup(repo(["a", 1]));
      await manager.start();
      expect(await answer(manager, "a")).toBe(2);
      backend.killAll();
      expect(await Promise.all([answer(manager, "a"), answer(manager, "a")])).toEqual([2, 2]);
      expect(backend.loads).toBe(2);
    });

    it("with Triton's rate limiter, holds an execution until the resources its instance lists are free", async () => {
      const files = repo(["a", 1], ["b", 2], ["free", 3]);
      const limited = `${YAML}instance_group: [{ count: 1, rate_limiter: { resources: [{ name: R, count: 1 }] } }]\n`;
      files["repo/a/function.yaml"] = limited;
      files["repo/b/function.yaml"] = limited;
      const { manager, backend } = setup(files, { resourceLimiter: new ResourceLimiter() });
      await manager.start();
      await Promise.all(["a", "b", "free"].map((name) => manager.acquire(name)));
      backend.gateRuns = true;
      const a = answer(manager, "a");
      const b = answer(manager, "b");
      const free = answer(manager, "free");
      await new Promise((resolve) => setImmediate(resolve));
      expect(backend.runs).toBe(2); // a and free run; b waits for R, counted as pending
      expect(manager.metricsEntries().find((e) => e.name === "b")!.pending).toBe(1);
      backend.finishRuns();
      expect(await a).toBe(2);
      await new Promise((resolve) => setImmediate(resolve));
      expect(backend.runs).toBe(3);
      backend.finishRuns();
      expect(await Promise.all([b, free])).toEqual([3, 4]);
    });

    it("unloads a function whose folder was removed", async () => {
      const { manager, platform } = setup(repo(["a", 1], ["b", 2]), { controlMode: "poll" });
      await manager.start();
      platform.remove("repo/b");
      await manager.poll();
      await expect(answer(manager, "b")).rejects.toMatchObject({ code: "NOT_FOUND" });
    });
  });
});

describe("rowShares (how ctx.infer and ensemble steps share a call's rows out)", () => {
  const rows = (n: number, width = 2): Tensor => ({ datatype: "INT32", shape: [n, width], data: Int32Array.from({ length: n * width }, (_, i) => i) });
  const sizes = (shares: Record<string, Tensor>[] | undefined) => shares?.map((s) => s.x!.shape[0]);

  it("keeps each share within max_batch_size, and shares rows out across idle instances", () => {
    expect(sizes(rowShares({ x: rows(16) }, 4, 2))).toEqual([4, 4, 4, 4]);
    expect(sizes(rowShares({ x: rows(3) }, 4, 2))).toEqual([2, 1]);
    expect(sizes(rowShares({ x: rows(20) }, 8, 1))).toEqual([8, 8, 4]);
  });

  it("sends a call whole when one request can take it, the function does not batch, or its inputs disagree on rows", () => {
    expect(rowShares({ x: rows(5) }, 16, 1)).toBeUndefined();
    expect(rowShares({ x: rows(1) }, 4, 2)).toBeUndefined();
    expect(rowShares({ x: rows(20) }, 0, 2)).toBeUndefined();
    expect(rowShares({ x: rows(20), y: rows(19) }, 4, 2)).toBeUndefined();
    expect(rowShares({ x: { datatype: "INT32", shape: [], data: Int32Array.of(1) } }, 4, 2)).toBeUndefined();
  });

  it("shares out at most MAX_ROW_SHARES full requests, and sends a larger call whole (for the function to refuse)", () => {
    expect(rowShares({ x: rows(4 * MAX_ROW_SHARES) }, 4, 1)).toHaveLength(MAX_ROW_SHARES);
    expect(rowShares({ x: rows(4 * MAX_ROW_SHARES + 1) }, 4, 1)).toBeUndefined();
  });

  it("gives every input the same rows of the call, as views, in order", () => {
    const shares = rowShares({ x: rows(5), y: rows(5, 1) }, 2, 1)!;
    expect(shares.map((s) => [...(s.y!.data as Int32Array)])).toEqual([[0, 1], [2, 3], [4]]);
    expect([...(shares[1]!.x!.data as Int32Array)]).toEqual([4, 5, 6, 7]);
    expect((shares[1]!.x!.data as Int32Array).buffer).toBe((shares[0]!.x!.data as Int32Array).buffer);
  });
});
