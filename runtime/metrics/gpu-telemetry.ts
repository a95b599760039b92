import type { Clock, GpuDevice, GpuReadings, Logger } from "../core/mod.ts";

/** One device's figures in Triton's units, as a scrape writes them. */
export interface GpuSample {
  uuid: string;
  name: string;
  /** A MIG device's GPU. */
  parent?: string;
  /** 0–1 (NVML's percent / 100). */
  utilization?: number;
  memoryTotalBytes?: number;
  memoryUsedBytes?: number;
  /** Watts (NVML's milliwatts / 1000). */
  powerWatts?: number;
  powerLimitWatts?: number;
  /** Joules since the server started (NVML counts since the driver loaded). */
  energyJoules?: number;
  temperatureCelsius?: number;
}

/** Triton's sampling period (`--metrics-interval-ms`). */
export const DEFAULT_METRICS_INTERVAL_MS = 2000;

/** What a default device budget leaves free of a GPU's memory at start: a tenth of it, at least 512 MiB (CUDA's context, cuDNN workspaces, arenas growing). */
export function deviceBudgetFrom(device: GpuDevice): number | undefined {
  if (device.memoryFreeBytes === undefined || device.memoryTotalBytes === undefined) return undefined;
  return Math.max(0, device.memoryFreeBytes - Math.max(512 * 2 ** 20, device.memoryTotalBytes / 10));
}

/**
 * The device this process's CUDA sessions use, as `CUDA_VISIBLE_DEVICES` names it (the first of
 * its entries: an index, a `GPU-…` or a `MIG-…` UUID), else GPU 0. NVML itself sees every device.
 */
export function visibleDevice(devices: readonly GpuDevice[], cudaVisibleDevices: string | undefined): GpuDevice | undefined {
  const gpus = devices.filter((d) => d.parent === undefined);
  const first = cudaVisibleDevices?.split(",")[0]?.trim();
  if (!first) return gpus[0];
  if (/^\d+$/.test(first)) return gpus.find((d) => d.index === Number(first));
  return devices.find((d) => d.uuid === first || d.uuid.startsWith(first));
}

/**
 * GPU figures for `/metrics`: NVML read once at start and then every `intervalMs` on a timer,
 * never on a request's path (a scrape writes the last sample). Energy counts from the first
 * reading, as Triton's `nv_energy_consumption` does.
 */
export class GpuTelemetry {
  readonly #read: () => GpuReadings;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #log: Logger;
  readonly #energyAtStart = new Map<string, number>();
  readonly #usedAtStart = new Map<string, number>();
  #devices: GpuDevice[] = [];
  #samples: GpuSample[] = [];
  #timer: unknown;
  #stopped = false;
  #failing = false;

  constructor(options: { read: () => GpuReadings; clock: Clock; intervalMs?: number; log: Logger }) {
    this.#read = options.read;
    this.#clock = options.clock;
    this.#intervalMs = options.intervalMs ?? DEFAULT_METRICS_INTERVAL_MS;
    this.#log = options.log;
  }

  /** Reads now and answers the readings (the device budget's default comes from them); samples on a timer after that while there are devices. */
  start(): GpuReadings {
    const readings = this.#sample();
    if (readings.devices && readings.devices.length > 0) this.#schedule();
    return readings;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
  }

  /** The last sample of every device (GPUs, then each one's MIG devices). */
  get samples(): readonly GpuSample[] {
    return this.#samples;
  }

  /**
   * Bytes in use on `uuid` now beyond what was in use when the server started, by NVML's last
   * sample: what the pool manager holds against the device budget when it exceeds its own
   * estimate (sessions' arenas and workspaces grow past a model's size).
   */
  usedSinceStart(uuid: string): number | undefined {
    const now = this.#devices.find((d) => d.uuid === uuid)?.memoryUsedBytes;
    const start = this.#usedAtStart.get(uuid);
    return now === undefined || start === undefined ? undefined : Math.max(0, now - start);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#sample();
      this.#schedule();
    }, this.#intervalMs);
  }

  #sample(): GpuReadings {
    let readings: GpuReadings;
    try {
      readings = this.#read();
    } catch (error) {
      readings = { problem: `NVML: ${(error as Error).message}` };
    }
    if (!readings.devices) {
      // Logged once per outage, not every interval.
      if (!this.#failing && this.#samples.length > 0) this.#log.warn(`GPU telemetry: ${readings.problem}; keeping the last readings`);
      this.#failing = true;
      return readings;
    }
    this.#failing = false;
    this.#devices = readings.devices;
    for (const d of readings.devices) {
      if (d.energyMillijoules !== undefined && !this.#energyAtStart.has(d.uuid)) this.#energyAtStart.set(d.uuid, d.energyMillijoules);
      if (d.memoryUsedBytes !== undefined && !this.#usedAtStart.has(d.uuid)) this.#usedAtStart.set(d.uuid, d.memoryUsedBytes);
    }
    this.#samples = readings.devices.map((d) => ({
      uuid: d.uuid,
      name: d.name,
      parent: d.parent,
      utilization: d.utilizationPercent === undefined ? undefined : d.utilizationPercent / 100,
      memoryTotalBytes: d.memoryTotalBytes,
      memoryUsedBytes: d.memoryUsedBytes,
      powerWatts: d.powerMilliwatts === undefined ? undefined : d.powerMilliwatts / 1000,
      powerLimitWatts: d.powerLimitMilliwatts === undefined ? undefined : d.powerLimitMilliwatts / 1000,
      energyJoules: d.energyMillijoules === undefined ? undefined : (d.energyMillijoules - this.#energyAtStart.get(d.uuid)!) / 1000,
      temperatureCelsius: d.temperatureCelsius,
    }));
    return readings;
  }
}
