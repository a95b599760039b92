import { describe, expect, it } from "vitest";
import { ModelManager } from "../../../runtime/lifecycle/mod.ts";
import type { ModelManagerOptions } from "../../../runtime/lifecycle/mod.ts";
import { KeyedRateLimiter } from "../../../runtime/lifecycle/rate-limiter.ts";
import { parseFunctionConfig } from "../../../runtime/config/mod.ts";
import type { LoadOptions, Session } from "../../../runtime/backends/mod.ts";
import type { Tensor } from "../../../runtime/mod.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { FakeBackend, fakeModel } from "../../support/fake-backend.ts";
import { MemoryPlatform } from "../../support/memory-platform.ts";

/**
 * A fake backend whose sessions take ownership of their inputs as a worker-backed session does:
 * the buffers are transferred (detached in the caller), so reusing feeds fails as it did in
 * onnxruntime-node's worker ("An ArrayBuffer is detached and could not be cloned").
 */
class TransferringBackend extends FakeBackend {
  override async load(model: Uint8Array, options: LoadOptions): Promise<Session> {
    const session = await super.load(model, options);
    const run = session.run.bind(session);
    session.run = (feeds: Record<string, Tensor>, runOptions) => {
      const buffers = Object.values(feeds).flatMap((t) => (ArrayBuffer.isView(t.data) ? [t.data.buffer as ArrayBuffer] : []));
      return run(structuredClone(feeds, { transfer: buffers }), runOptions);
    };
    return session;
  }
}

function setup(files: Record<string, string | Uint8Array>, options: Partial<ModelManagerOptions> = {}, backend = new FakeBackend()) {
  const platform = new MemoryPlatform(files);
  const manager = new ModelManager({ platform, repository: "repo", backends: { onnxruntime: backend }, clock: new FakeClock(), controlMode: "lazy", ...options });
  return { platform, backend, manager };
}

/** Lets queued promise callbacks run, a bounded number of turns (no timers involved). */
async function until(condition: () => boolean, turns = 100): Promise<void> {
  for (let i = 0; i < turns && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error("condition not reached");
}

describe("unload during a load", () => {
  it("cancels it: no more instances are created, those created are released, the load's caller gets an error", async () => {
    const { manager, backend } = setup({ "repo/a/function.yaml": "max_batch_size: 4\ninstance_group: [{ count: 3 }]\n", "repo/a/1/model.onnx": fakeModel(1) });
    await manager.start();
    backend.hold = true;
    const loading = manager.load("a");
    const failed = loading.catch((e: Error) => e);
    await until(() => backend.loads === 1);
    backend.hold = false;
    const unloading = manager.unload("a");
    backend.release();
    await unloading;
    expect(await failed).toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/cancelled by an unload/) });
    expect(backend.loads).toBe(1);
    expect(backend.live).toBe(0);
    expect(manager.index().map((r) => r.state)).toEqual(["UNAVAILABLE"]);
  });
});

describe("model_warmup on a backend that transfers its inputs", () => {
  it("loads with count 2 on two instances: every run gets fresh feeds", async () => {
    const yaml = [
      "max_batch_size: 4",
      "instance_group: [{ count: 2, kind: KIND_CPU }]",
      "model_warmup: [{ name: zeros, batch_size: 2, count: 2, inputs: { x: { data_type: TYPE_FP32, dims: [1], random_data: true } } }]",
      "",
    ].join("\n");
    const { manager, backend } = setup({ "repo/a/function.yaml": yaml, "repo/a/1/model.onnx": fakeModel(1) }, {}, new TransferringBackend());
    await manager.start();
    await manager.acquire("a");
    expect(backend.runs).toBe(4);
  });
});

describe("the scanner", () => {
  it("skips folders with invalid names and ignores version folders over 2^31−1, logging each once, safely quoted", async () => {
    const { manager, platform } = setup({
      "repo/good/1/model.onnx": fakeModel(1),
      "repo/good/99999999999999999999/model.onnx": fakeModel(2),
      "repo/bad\nINFO forged/1/model.onnx": fakeModel(3),
      "repo/\u001b[31mred/1/model.onnx": fakeModel(4),
    });
    await manager.start();
    await manager.poll();
    await manager.poll();
    expect(manager.index().map((r) => [r.name, r.version])).toEqual([["good", "1"]]);
    const warnings = platform.lines.filter((l) => l.startsWith("warn"));
    expect(warnings).toEqual([
      `warn repository: skipping folder "\\u001b[31mred": function names use only A-Z, a-z, 0-9, '_', '.' and '-', do not start with '.', and are at most 128 characters`,
      `warn repository: skipping folder "bad\\nINFO forged": function names use only A-Z, a-z, 0-9, '_', '.' and '-', do not start with '.', and are at most 128 characters`,
      `warn good: ignoring version folder "99999999999999999999": versions go up to 2147483647`,
    ]);
  });
});

describe("the load API", () => {
  const config = parseFunctionConfig("max_batch_size: 4\n", { file: "f", name: "x" }).config!;

  it("refuses invalid names with 400 naming the rule, before touching anything", async () => {
    const { manager } = setup({});
    for (const name of ["../a", "a/b", ".x", "a\nb"]) {
      await expect(manager.load(name, { config: { ...config, name }, files: new Map([[1, new Map([["model.onnx", fakeModel(1)]])]]) })).rejects.toMatchObject({ code: "INVALID_ARG", message: expect.stringMatching(/function names use only/) });
      await expect(manager.unload(name)).rejects.toMatchObject({ code: "INVALID_ARG" });
      await expect(manager.park(name)).rejects.toMatchObject({ code: "INVALID_ARG" });
    }
  });

  it("bounds uploaded bytes per load, in total, and the number of uploaded functions (413 naming the flag)", async () => {
    const { manager } = setup({ "repo/other/1/model.onnx": fakeModel(1) }, { limits: { uploadBytes: 1500, uploadTotalBytes: 2500, apiFunctions: 2 } });
    await manager.start();
    const upload = (name: string, size: number) => manager.load(name, { config: { ...config, name }, files: new Map([[1, new Map([["model.onnx", fakeModel(1, size)]])]]) });
    await expect(upload("big", 1501)).rejects.toMatchObject({ code: "RESOURCE_EXHAUSTED", message: expect.stringMatching(/1501 bytes, over the server's ceiling of 1500 \(--max-upload-size\)/) });
    await upload("a", 1000);
    await upload("a", 1200); // a reload replaces its own bytes
    await expect(upload("b", 1400)).rejects.toMatchObject({ message: expect.stringMatching(/2600 bytes .* ceiling of 2500 \(--max-upload-total\)/) });
    await upload("b", 1000);
    await expect(upload("c", 10)).rejects.toMatchObject({ message: expect.stringMatching(/3 functions registered by upload, over the server's ceiling of 2 \(--max-api-functions\)/) });
  });

  it("refuses a config over a ceiling and a version over 2^31−1", async () => {
    const { manager } = setup({}, { limits: { instances: 4 } });
    const name = "x";
    const big = { ...config, instance_group: [{ name: "g", count: 5, kind: "KIND_CPU" as const, gpus: [] }] };
    await expect(manager.load(name, { config: big, files: new Map([[1, new Map([["model.onnx", fakeModel(1)]])]]) })).rejects.toMatchObject({ message: expect.stringMatching(/instance_group\[0\]\.count: 5 is over the server's ceiling of 4 .*--max-instances/) });
    await expect(manager.load(name, { config, files: new Map([[2 ** 31, new Map([["model.onnx", fakeModel(1)]])]]) })).rejects.toMatchObject({ code: "INVALID_ARG", message: expect.stringMatching(/version 2147483648/) });
  });
});

describe("KeyedRateLimiter", () => {
  it("caps the total over all keys, so random keys cannot bypass the limit", () => {
    const clock = new FakeClock();
    const limiter = new KeyedRateLimiter({ requests_per_second: 0.001, burst: 2, key_header: "x-api-key", total_requests_per_second: 0.01, total_burst: 5 }, clock);
    const admitted = Array.from({ length: 100 }, (_, i) => limiter.take(`random-${i}`)).filter((a) => a.ok).length;
    expect(admitted).toBe(5);
    expect(limiter.take("another")).toMatchObject({ ok: false, total: true });
  });

  it("does not spend the total on a key that is over its own limit", () => {
    const limiter = new KeyedRateLimiter({ requests_per_second: 0.001, burst: 1, key_header: "k", total_requests_per_second: 0.001, total_burst: 2 }, new FakeClock());
    expect(limiter.take("a").ok).toBe(true);
    for (let i = 0; i < 10; i++) expect(limiter.take("a")).not.toHaveProperty("total");
    expect(limiter.take("b").ok).toBe(true);
  });
});
