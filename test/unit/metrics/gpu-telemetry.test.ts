import { describe, expect, it } from "vitest";
import { deviceBudgetFrom, GpuTelemetry, visibleDevice } from "../../../runtime/metrics/mod.ts";
import { PoolManager } from "../../../runtime/lifecycle/pool-manager.ts";
import type { ManagedVersion } from "../../../runtime/lifecycle/managed-version.ts";
import type { GpuDevice, GpuReadings } from "../../../runtime/core/mod.ts";
import { FakeClock } from "../../support/fake-clock.ts";

const GiB = 2 ** 30;
const gpu = (over: Partial<GpuDevice> = {}): GpuDevice => ({ index: 0, uuid: "GPU-a", name: "G", memoryTotalBytes: 80 * GiB, memoryUsedBytes: 10 * GiB, memoryFreeBytes: 70 * GiB, energyMillijoules: 5000, powerMilliwatts: 1500, utilizationPercent: 30, ...over });
const quiet = { info() {}, warn() {}, error() {} };

describe("GpuTelemetry", () => {
  it("converts NVML's units to Triton's, counts energy from the first reading and samples on its interval", () => {
    const clock = new FakeClock();
    let energy = 5000;
    let reads = 0;
    const telemetry = new GpuTelemetry({ read: () => (reads++, { devices: [gpu({ energyMillijoules: energy })] }), clock, intervalMs: 2000, log: quiet });
    telemetry.start();
    expect(telemetry.samples[0]).toMatchObject({ uuid: "GPU-a", utilization: 0.3, powerWatts: 1.5, energyJoules: 0, memoryUsedBytes: 10 * GiB });
    energy = 9000;
    clock.advance(1999);
    expect(reads).toBe(1);
    clock.advance(1);
    expect(reads).toBe(2);
    expect(telemetry.samples[0]!.energyJoules).toBe(4);
    telemetry.stop();
    clock.advance(10_000);
    expect(reads).toBe(2);
  });

  it("keeps the last readings through an NVML failure, warning once", () => {
    const clock = new FakeClock();
    const warnings: string[] = [];
    let result: GpuReadings = { devices: [gpu()] };
    const telemetry = new GpuTelemetry({ read: () => result, clock, intervalMs: 100, log: { ...quiet, warn: (m) => warnings.push(m) } });
    telemetry.start();
    result = { problem: "GPU is lost" };
    clock.advance(500);
    expect(warnings).toEqual(["GPU telemetry: GPU is lost; keeping the last readings"]);
    expect(telemetry.samples).toHaveLength(1);
  });

  it("reports device memory used since start, for the pool manager", () => {
    let used = 10 * GiB;
    const clock = new FakeClock();
    const telemetry = new GpuTelemetry({ read: () => ({ devices: [gpu({ memoryUsedBytes: used })] }), clock, intervalMs: 100, log: quiet });
    telemetry.start();
    expect(telemetry.usedSinceStart("GPU-a")).toBe(0);
    used = 13 * GiB;
    clock.advance(100);
    expect(telemetry.usedSinceStart("GPU-a")).toBe(3 * GiB);
    expect(telemetry.usedSinceStart("GPU-b")).toBeUndefined();
    telemetry.stop();
  });
});

describe("the device budget's default", () => {
  it("is the free memory less a tenth of the device (at least 512 MiB)", () => {
    expect(deviceBudgetFrom(gpu())).toBe(70 * GiB - 8 * GiB);
    expect(deviceBudgetFrom(gpu({ memoryTotalBytes: 2 * GiB, memoryFreeBytes: GiB }))).toBe(GiB / 2);
    expect(deviceBudgetFrom(gpu({ memoryFreeBytes: undefined }))).toBeUndefined();
  });

  it("follows CUDA_VISIBLE_DEVICES: an index, a GPU or MIG UUID (or its prefix), else GPU 0", () => {
    const devices = [gpu({ uuid: "GPU-a" }), gpu({ index: 1, uuid: "GPU-b" }), gpu({ index: 0, uuid: "MIG-c", parent: "GPU-b" })];
    expect(visibleDevice(devices, undefined)?.uuid).toBe("GPU-a");
    expect(visibleDevice(devices, "1,0")?.uuid).toBe("GPU-b");
    expect(visibleDevice(devices, "MIG-c")?.uuid).toBe("MIG-c");
    expect(visibleDevice(devices, "GPU-b")?.uuid).toBe("GPU-b");
    expect(visibleDevice(devices, "7")).toBeUndefined();
  });
});

describe("PoolManager against what NVML reports", () => {
  /** A version as the pool manager sees it: `device` bytes held on the GPU, idle. */
  const version = (name: string, device: number, parked: string[]) =>
    ({
      name,
      version: 1,
      state: "READY",
      inflight: 0,
      loading: false,
      liveSequences: 0,
      lastUsed: 0,
      footprint: () => ({ host: 0, device }),
      footprintWhenParked: () => ({ host: 0, device: 0 }),
      park: async () => void parked.push(name),
      unload: async () => {},
    }) as unknown as ManagedVersion;

  it("parks for a load that fits the estimate but not what the device really holds", async () => {
    for (const [observed, parks] of [[0, []], [9 * GiB, ["idle"]]] as const) {
      const parked: string[] = [];
      const pool = new PoolManager({ device: 10 * GiB }, quiet, () => observed);
      const idle = version("idle", 2 * GiB, parked);
      const loading = version("new", 0, parked);
      await pool.withRoom(loading, { host: 0, device: 3 * GiB }, [idle, loading], async () => {});
      expect(parked).toEqual(parks);
    }
  });
});
