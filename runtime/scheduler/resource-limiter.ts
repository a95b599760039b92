/** What one model instance holds while it executes (Triton's instance_group `rate_limiter`). */
export interface ResourceNeeds {
  resources: readonly { name: string; global: boolean; count: number }[];
  /** Turn weight: 2 gets half the turns of 1; 0 counts as 1. */
  priority: number;
  /** The instance's device ("cpu", "gpu0"…): non-global resources are counted per device. */
  device: string;
}

/** A pool size from `--rate-limit-resource name:count[:device]` (no device: every device, and global). */
export interface ResourceOverride {
  name: string;
  count: number;
  device?: string;
}

/** One registered instance's handle: wait for its resources, and leave when the instance goes. */
export interface ResourceClaim {
  /** Resolves once the resources are held; call the function it gives to free them. */
  acquire(): Promise<() => void>;
  unregister(): void;
}

interface Claimant {
  needs: ResourceNeeds;
  /** Stride scheduling: the instance with the smallest pass goes next; each turn adds its priority. */
  pass: number;
}

interface Waiter {
  claimant: Claimant;
  arrival: number;
  grant: (release: () => void) => void;
}

/**
 * Triton's rate limiter (`--rate-limit execution_count`), across every function of a server: an
 * instance executes only when the resources its group lists are free on its device (or globally),
 * and waiting instances take turns by priority. A pool's size is its override, else the largest
 * count any registered instance asks for, so every instance can run alone. Head of line: the
 * instance whose turn it is waits for its resources rather than letting smaller ones pass, so a
 * large one is never starved.
 */
export class ResourceLimiter {
  readonly #overrides: readonly ResourceOverride[];
  readonly #asked = new Map<string, Map<Claimant, number>>();
  readonly #inUse = new Map<string, number>();
  #waiting: Waiter[] = [];
  #arrivals = 0;
  /** The pass of the last turn given, where a newcomer starts (so it neither jumps nor lags the others). */
  #clock = 0;

  constructor(overrides: readonly ResourceOverride[] = []) {
    this.#overrides = overrides;
  }

  register(needs: ResourceNeeds): ResourceClaim {
    const claimant: Claimant = { needs, pass: this.#clock };
    for (const r of needs.resources) {
      const key = keyOf(r, needs.device);
      let asked = this.#asked.get(key);
      if (!asked) this.#asked.set(key, (asked = new Map()));
      asked.set(claimant, r.count);
    }
    return {
      acquire: () => new Promise((grant) => {
        // An instance back from idleness starts level with the others: no burst of saved-up turns.
        claimant.pass = Math.max(claimant.pass, this.#clock);
        this.#waiting.push({ claimant, arrival: this.#arrivals++, grant });
        this.#grant();
      }),
      unregister: () => {
        for (const r of needs.resources) this.#asked.get(keyOf(r, needs.device))?.delete(claimant);
        this.#grant();
      },
    };
  }

  /** Instances waiting for resources now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** The size of a resource pool (name, and device unless global). */
  poolSize(name: string, device?: string): number {
    const key = device === undefined ? `${name}@global` : `${name}@${device}`;
    const override = this.#overrides.find((o) => o.name === name && (o.device === undefined || o.device === device));
    if (override) return override.count;
    return Math.max(0, ...(this.#asked.get(key)?.values() ?? []));
  }

  #grant(): void {
    while (this.#waiting.length > 0) {
      const next = this.#waiting.reduce((a, b) => (b.claimant.pass < a.claimant.pass || (b.claimant.pass === a.claimant.pass && b.arrival < a.arrival) ? b : a));
      const { needs } = next.claimant;
      const fits = needs.resources.every((r) => (this.#inUse.get(keyOf(r, needs.device)) ?? 0) + r.count <= this.poolSize(r.name, r.global ? undefined : needs.device));
      if (!fits) return;
      this.#waiting.splice(this.#waiting.indexOf(next), 1);
      for (const r of needs.resources) this.#take(keyOf(r, needs.device), r.count);
      this.#clock = next.claimant.pass;
      next.claimant.pass += Math.max(1, needs.priority);
      let released = false;
      next.grant(() => {
        if (released) return;
        released = true;
        for (const r of needs.resources) this.#take(keyOf(r, needs.device), -r.count);
        this.#grant();
      });
    }
  }

  #take(key: string, count: number): void {
    this.#inUse.set(key, (this.#inUse.get(key) ?? 0) + count);
  }
}

function keyOf(resource: { name: string; global: boolean }, device: string): string {
  return resource.global ? `${resource.name}@global` : `${resource.name}@${device}`;
}
