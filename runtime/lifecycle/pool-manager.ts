import { RuntimeError } from "../core/mod.ts";
import type { Logger } from "../core/mod.ts";
import type { Accelerator, DeclaredConfig } from "../config/mod.ts";
import { instancePlacements } from "./instance-placement.ts";
import type { ManagedVersion } from "./managed-version.ts";
import { holdsOnDevice, planRoom, versionFootprint } from "./memory-budget.ts";
import type { Budgets, Footprint, RoomCandidate } from "./memory-budget.ts";

/** What a version will hold once loaded, from its declared instance groups (`versionFootprint`). */
export function estimateFootprint(declared: DeclaredConfig & { accelerator: Accelerator }, bytes: number): Footprint {
  const placements = instancePlacements(declared.instance_group, declared.accelerator);
  const onDevice = placements.filter((p) => holdsOnDevice(p.accelerator)).length;
  // A generator's instances each hold a KV cache of their own.
  return versionFootprint(bytes, placements.length - onDevice, onDevice, (declared.generation?.kv_cache_bytes ?? 0) * Math.max(1, placements.length));
}

/**
 * Keeps loads within the memory budgets: before a load it parks, then evicts, idle versions
 * (least recently used first, as `planRoom` decides) and refuses with 503 naming the budget when
 * even that cannot make room. Loads under a budget run one at a time, so two never count the same
 * free bytes.
 */
export class PoolManager {
  readonly #budgets: Budgets;
  readonly #log: Logger;
  readonly #observedDevice?: () => number | undefined;
  #lock: Promise<unknown> = Promise.resolve();

  /** `observedDevice`: what NVML sees in use on the device since start, held against the budget where it exceeds the estimate. */
  constructor(budgets: Budgets, log: Logger, observedDevice?: () => number | undefined) {
    this.#budgets = budgets;
    this.#log = log;
    this.#observedDevice = observedDevice;
  }

  /** Runs `load` of the version `loading` names once `need` fits beside every other version in `versions` (what `loading` holds now counted too). */
  withRoom<T>(loading: { name: string; version: number }, need: Footprint, versions: readonly ManagedVersion[], load: () => Promise<T>): Promise<T> {
    const run = async () => {
      const self = (v: ManagedVersion) => v.name === loading.name && v.version === loading.version;
      await this.#makeRoom(loading, need, versions.find(self)?.footprint() ?? { host: 0, device: 0 }, versions.filter((v) => !self(v)));
      return await load();
    };
    const result = this.#lock.then(run, run);
    this.#lock = result.catch(() => undefined);
    return result;
  }

  async #makeRoom(loading: { name: string; version: number }, need: Footprint, held: Footprint, others: ManagedVersion[]): Promise<void> {
    const used = others.reduce((sum, v) => add(sum, v.footprint()), held);
    // Sessions' arenas and workspaces grow past a model's size: the device holds what NVML says if that is more.
    used.device = Math.max(used.device, this.#observedDevice?.() ?? 0);
    const candidates: RoomCandidate[] = others
      // Not one holding live sequences: parking it for room would end them.
      .filter((v) => (v.state === "READY" && v.inflight === 0 && !v.loading && v.liveSequences === 0) || v.state === "PARKED")
      .map((v) => {
        const held = v.footprint();
        return { key: key(v), state: v.state as "READY" | "PARKED", lastUsed: v.lastUsed, parkFrees: sub(held, v.footprintWhenParked()), evictFrees: held };
      });
    const plan = planRoom(need, used, this.#budgets, candidates);
    if (!plan) {
      const which = this.#budgets.host !== undefined && used.host + need.host > this.#budgets.host ? "host" : "device";
      throw new RuntimeError(
        "UNAVAILABLE",
        `not enough memory to load '${loading.name}' version ${loading.version}: it needs ~${mb(need[which])} of ${which} memory, ` +
          `--${which}-memory-budget is ${mb(this.#budgets[which]!)} and ${mb(used[which])} is held by functions that are busy or cannot be parked`,
      );
    }
    const byKey = new Map(others.map((v) => [key(v), v]));
    for (const k of plan.park) {
      await byKey.get(k)!.park("budget");
      this.#log.info(`${k}: parked to make room for ${key(loading)}`);
    }
    for (const k of plan.evict) {
      await byKey.get(k)!.unload(`evicted to make room for '${loading.name}'`, "budget");
      this.#log.info(`${k}: evicted to make room for ${key(loading)}`);
    }
  }
}

function key(v: { name: string; version: number }): string {
  return `${v.name}/${v.version}`;
}

function add(a: Footprint, b: Footprint): Footprint {
  return { host: a.host + b.host, device: a.device + b.device };
}

function sub(a: Footprint, b: Footprint): Footprint {
  return { host: a.host - b.host, device: a.device - b.device };
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
