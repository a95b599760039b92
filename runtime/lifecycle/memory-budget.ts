/** Bytes a deployment holds in host memory and on the accelerator. */
export interface Footprint {
  host: number;
  device: number;
}

/** True for an accelerator or execution provider whose sessions hold their weights on the device. */
export function holdsOnDevice(acceleratorOrProvider: string): boolean {
  return /^(cuda|tensorrt)\b/.test(acceleratorOrProvider);
}

/**
 * The one estimate of what a version holds: its model bytes on the host (kept to load, park and
 * wake from), plus one model-sized session per instance — on the device for device instances.
 * Used before a load (from the declared instance groups) and after it (from the sessions made).
 * A generator's KV cache (on the host: the CPU gathers it into each step's feeds) counts while it
 * is in memory: `kv_cache_bytes`, the most it may take, before a load; its blocks' bytes after.
 */
export function versionFootprint(modelBytes: number, hostInstances: number, deviceInstances: number, kvCacheBytes = 0): Footprint {
  return { host: modelBytes * (1 + hostInstances) + kvCacheBytes, device: modelBytes * deviceInstances };
}

/** Budgets in bytes; undefined = unlimited (`--host-memory-budget`, `--device-memory-budget`). */
export interface Budgets {
  host?: number;
  device?: number;
}

/** A deployment the planner may park or evict to make room. */
export interface RoomCandidate {
  key: string;
  state: "READY" | "PARKED";
  lastUsed: number;
  /** What parking a READY one frees (its sessions; the model bytes stay). */
  parkFrees: Footprint;
  /** What evicting frees: everything it holds. */
  evictFrees: Footprint;
}

/** Which deployments to park and which to evict, in order. */
export interface RoomPlan {
  park: string[];
  evict: string[];
}

/**
 * Plans room for a load that needs `need` on top of `used`. Policy: park idle READY deployments
 * least recently used first (cheap to bring back: their bytes stay in RAM); if that is not enough,
 * evict PARKED ones (including those just parked), least recently used first. Returns undefined
 * when even evicting every candidate would not fit — the caller refuses the load (503) rather than
 * risk running out of memory. Candidates must already exclude busy deployments.
 */
export function planRoom(need: Footprint, used: Footprint, budgets: Budgets, candidates: readonly RoomCandidate[]): RoomPlan | undefined {
  const plan: RoomPlan = { park: [], evict: [] };
  const now = { ...used };
  const fits = () =>
    (budgets.host === undefined || now.host + need.host <= budgets.host) &&
    (budgets.device === undefined || now.device + need.device <= budgets.device);
  if (fits()) return plan;
  const lru = [...candidates].sort((a, b) => a.lastUsed - b.lastUsed);
  for (const c of lru.filter((c) => c.state === "READY")) {
    plan.park.push(c.key);
    now.host -= c.parkFrees.host;
    now.device -= c.parkFrees.device;
    if (fits()) return plan;
  }
  for (const c of lru) {
    // A READY candidate was parked above: evicting it now frees only what parking left.
    const frees = c.state === "READY" ? { host: c.evictFrees.host - c.parkFrees.host, device: c.evictFrees.device - c.parkFrees.device } : c.evictFrees;
    plan.evict.push(c.key);
    now.host -= frees.host;
    now.device -= frees.device;
    if (fits()) return plan;
  }
  return undefined;
}

/** "512M", "2G", "100k" or plain bytes; undefined for text that is not a size. */
export function parseByteSize(text: string): number | undefined {
  const match = /^([0-9]+(?:\.[0-9]+)?)\s*([kKmMgGtT]?)i?[bB]?$/.exec(text.trim());
  if (!match) return undefined;
  const scale = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[match[2]!.toLowerCase()]!;
  return Math.round(Number(match[1]) * scale);
}
