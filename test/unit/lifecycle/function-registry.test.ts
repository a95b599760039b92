import { describe, expect, it } from "vitest";
import { FunctionRegistry } from "../../../runtime/lifecycle/function-registry.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { FakeBackend, fakeModel } from "../../support/fake-backend.ts";
import { MemoryPlatform } from "../../support/memory-platform.ts";

const files = {
  "repo/a/function.yaml": "max_batch_size: 4\nversion_policy: { all: {} }\n",
  "repo/a/1/model.onnx": fakeModel(1),
  "repo/a/2/model.onnx": fakeModel(2),
  "repo/b/function.yaml": "max_batch_size: 4\n",
  "repo/b/1/model.onnx": fakeModel(3),
};

function setup(options: { loadModels?: string[] } = {}) {
  const backend = new FakeBackend();
  const registry = new FunctionRegistry({ platform: new MemoryPlatform(files), repository: "repo", backends: { onnxruntime: backend }, clock: new FakeClock(), controlMode: "explicit", ...options });
  return { registry, backend };
}

describe("FunctionRegistry (the functions, without serving)", () => {
  it("registers every function at start and loads only the ones explicit mode names", async () => {
    const { registry, backend } = setup({ loadModels: ["a"] });
    await registry.start();
    expect(registry.functions().map((fn) => [fn.name, fn.wanted, [...fn.versions.values()].map((v) => v.state)])).toEqual([
      ["a", true, ["READY", "READY"]],
      ["b", false, ["UNAVAILABLE"]],
    ]);
    expect(backend.loads).toBe(2);
  });

  it("`pick()` takes the version asked for, else the highest READY one; unknown names and versions are NOT_FOUND", async () => {
    const { registry } = setup({ loadModels: ["a"] });
    await registry.start();
    const a = registry.function("a");
    expect(registry.pick(a).version).toBe(2);
    expect(registry.pick(a, "1").version).toBe(1);
    expect(() => registry.pick(a, "3")).toThrow(expect.objectContaining({ code: "NOT_FOUND" }));
    expect(() => registry.function("c")).toThrow(expect.objectContaining({ code: "NOT_FOUND" }));
  });

  it("`unload()` drains a function and leaves it registered, unwanted; `stop()` unloads the rest", async () => {
    const { registry } = setup({ loadModels: ["*"] });
    await registry.start();
    await registry.unload("a");
    expect(registry.function("a").wanted).toBe(false);
    expect([...registry.function("a").versions.values()].map((v) => v.state)).toEqual(["UNAVAILABLE", "UNAVAILABLE"]);
    await registry.stop();
    expect([...registry.function("b").versions.values()].map((v) => v.state)).toEqual(["UNAVAILABLE"]);
  });
});

describe("FunctionRegistry.redact()", () => {
  it("makes absolute paths into the repository relative, leaves a sibling that starts alike, and drops loaders' query strings", async () => {
    const platform = new MemoryPlatform({ "/srv/repo/a/function.yaml": "max_batch_size: 4\n", "/srv/repo/a/1/model.onnx": fakeModel(1) });
    const registry = new FunctionRegistry({ platform, repository: "/srv/repo", backends: { onnxruntime: new FakeBackend() }, clock: new FakeClock(), controlMode: "explicit" });
    await registry.start();
    expect(registry.redact("at /srv/repo/a/handler.ts?namespace=12ab-3:1:2 and file:///srv/repo/a/x.ts")).toBe("at a/handler.ts:1:2 and a/x.ts");
    expect(registry.redact("in /srv/repo, not /srv/repo2/a")).toBe("in ., not /srv/repo2/a");
  });
});
