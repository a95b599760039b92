import { describe, expect, it } from "vitest";
import { instancePlacements } from "../../../runtime/lifecycle/instance-placement.ts";
import type { InstanceGroup } from "../../../runtime/config/mod.ts";

const group = (g: Partial<InstanceGroup>): InstanceGroup => ({ name: "g", count: 1, kind: "KIND_AUTO", gpus: [], ...g });

describe("instancePlacements()", () => {
  it("places KIND_CPU instances on the CPU whatever the function asks", () => {
    expect(instancePlacements([group({ kind: "KIND_CPU", count: 2 })], "cuda")).toEqual([{ accelerator: "cpu" }, { accelerator: "cpu" }]);
  });

  it("places `count` KIND_GPU instances on each listed GPU, on GPU 0 when none is listed", () => {
    expect(instancePlacements([group({ kind: "KIND_GPU", count: 2, gpus: [0, 1] })], "auto")).toEqual([
      { accelerator: "cuda", deviceId: 0 },
      { accelerator: "cuda", deviceId: 0 },
      { accelerator: "cuda", deviceId: 1 },
      { accelerator: "cuda", deviceId: 1 },
    ]);
    expect(instancePlacements([group({ kind: "KIND_GPU" })], "tensorrt")).toEqual([{ accelerator: "tensorrt", deviceId: 0 }]);
  });

  it("lets KIND_AUTO follow the function's accelerator, and mixes groups in order", () => {
    expect(instancePlacements([group({ count: 1 }), group({ kind: "KIND_CPU" })], "auto")).toEqual([{ accelerator: "auto" }, { accelerator: "cpu" }]);
  });

  it("gives one instance when there is no group", () => {
    expect(instancePlacements([], "cpu")).toEqual([{ accelerator: "cpu" }]);
  });
});
