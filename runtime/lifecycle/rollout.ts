import type { RolloutConfig } from "../config/mod.ts";

/** The request header whose value keeps a client on one side of a rollout (a user id, a session). */
export const ROLLOUT_KEY_HEADER = "x-tensorfn-rollout-key";

/** A rollout as the API answers it. */
export interface RolloutView {
  stable: number;
  canary: number;
  /** The canary's share of the requests that name no version, 0 to 100. */
  percent: number;
}

/** A change asked of a running rollout (`POST /v2/repository/models/{m}/rollout`). */
export type RolloutChange = { percent: number } | { promote: true } | { abort: true };

/**
 * The versions a function with a rollout serves: the policy's, plus the canary and the stable one
 * (the highest other version the policy serves; where it serves none but the canary, as the
 * default `latest: 1` does when the canary is the newest folder, the highest other folder).
 * A problem where the canary's folder is missing or no other version exists.
 */
export function rolloutVersions(rollout: RolloutConfig, policy: readonly number[], available: readonly number[]): { served: number[]; stable: number } | { problem: string } {
  const canary = rollout.canary.version;
  if (!available.includes(canary)) return { problem: `rollout.canary.version: no version folder ${canary} (found: ${available.join(", ") || "none"})` };
  const others = (list: readonly number[]) => list.filter((v) => v !== canary);
  const stable = others(policy).at(-1) ?? others(available).at(-1);
  if (stable === undefined) return { problem: `rollout.canary.version ${canary}: a rollout needs a second version folder to serve beside the canary (found: ${available.join(", ")})` };
  return { served: [...new Set([...policy, stable, canary])].sort((a, b) => a - b), stable };
}

/**
 * Which version serves each request that names none. A request with a key (the rollout key
 * header, a sequence's id) goes where the key hashes: the same key to the same version while the
 * share stands, and a key on the canary stays there as the share grows. Requests without one are
 * spread exactly: after n of them the canary has had ⌊n × percent / 100⌋ (give or take one).
 */
export class Rollout {
  readonly canary: number;
  readonly stable: number;
  #percent: number;
  /** Hundredths of a request owed to the canary. */
  #credit = 0;

  constructor(config: RolloutConfig, stable: number) {
    this.canary = config.canary.version;
    this.stable = stable;
    this.#percent = config.canary.percent;
  }

  get view(): RolloutView {
    return { stable: this.stable, canary: this.canary, percent: this.#percent };
  }

  choose(key?: string): number {
    if (this.#percent <= 0) return this.stable;
    if (this.#percent >= 100) return this.canary;
    if (key !== undefined) return bucket(key) < this.#percent * 100 ? this.canary : this.stable;
    this.#credit += this.#percent;
    if (this.#credit < 100) return this.stable;
    this.#credit -= 100;
    return this.canary;
  }

  /** Applies a change; answers what it did, for the log and the events counter. */
  change(change: RolloutChange): "set" | "promote" | "abort" {
    if ("promote" in change) return (this.#percent = 100), "promote";
    if ("abort" in change) return (this.#percent = 0), "abort";
    this.#percent = change.percent;
    return "set";
  }
}

/** A key's place in 0..9999 (FNV-1a over its UTF-16 code units): stable across processes and restarts. */
function bucket(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % 10_000;
}
