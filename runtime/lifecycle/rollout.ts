import type { RolloutAnalysis, RolloutConfig } from "../config/mod.ts";
import type { FailureReason } from "../metrics/mod.ts";
import { planRollout, WindowSide } from "./rollout-analysis.ts";
import { Shadow } from "./rollout-shadow.ts";
import type { ShadowFigures } from "./rollout-shadow.ts";
import type { SideFigures } from "./rollout-analysis.ts";

/** The request header whose value keeps a client on one side of a rollout (a user id, a session). */
export const ROLLOUT_KEY_HEADER = "x-tensorfn-rollout-key";

/** A rollout as the API answers it. */
export interface RolloutView {
  stable: number;
  canary?: number;
  /** The canary's share of the requests that name no version, 0 to 100. */
  percent?: number;
  /** The current window's figures (what the analysis, when there is one, judges); `slow_before`: windows judged slow in a row before it at this share. */
  window?: { elapsed_s: number; slow_before: number; canary: SideFigures; stable: SideFigures };
  /** The shadow's copies and how its answers compared. */
  shadow?: ShadowFigures;
}

/** A change asked of a running rollout (`POST /v2/repository/models/{m}/rollout`). */
export type RolloutChange = { percent: number } | { promote: true } | { abort: true };

/** What changed a rollout's share, or held it for another window, as logged and counted (`tensorfn_rollout_events_total`). */
export interface RolloutEvent {
  /** `hold`: the analysis judged a window slow and starts a new one at the same share. */
  event: "set" | "step" | "promote" | "abort" | "hold";
  /** `api`, or the analysis's: `analysis` (a step or a promotion), `error_rate`, `p99_ratio` (an abort or a hold). */
  reason: string;
  percent: number;
  detail?: string;
}

/**
 * The versions a function with a rollout serves: the policy's, plus the canary, the shadow and the
 * stable one (the highest other version the policy serves; where it serves none but those, as the
 * default `latest: 1` does when the canary is the newest folder, the highest other folder).
 * A problem where the canary's or the shadow's folder is missing or no other version exists.
 */
export function rolloutVersions(rollout: RolloutConfig, policy: readonly number[], available: readonly number[]): { served: number[]; stable: number } | { problem: string } {
  const found = `(found: ${available.join(", ") || "none"})`;
  const sides = (["canary", "shadow"] as const).flatMap((side) => (rollout[side] ? [{ side, version: rollout[side].version }] : []));
  for (const { side, version } of sides) if (!available.includes(version)) return { problem: `rollout.${side}.version: no version folder ${version} ${found}` };
  const own = sides.map((s) => s.version);
  const others = (list: readonly number[]) => list.filter((v) => !own.includes(v));
  const stable = others(policy).at(-1) ?? others(available).at(-1);
  if (stable === undefined) return { problem: `rollout.${sides[0]!.side}.version ${own[0]}: a rollout needs another version folder to serve beside its ${sides.map((s) => s.side).join(" and ")} ${found}` };
  return { served: [...new Set([...policy, stable, ...own])].sort((a, b) => a - b), stable };
}

/**
 * Which version serves each request that names none, and the canary's analysis. A request with a
 * key (the rollout key header, a sequence's id) goes where the key hashes: the same key to the
 * same version while the share stands, and a key on the canary stays there as the share grows.
 * Requests without one are spread exactly: after n of them the canary has had ⌊n × percent / 100⌋
 * (give or take one). Both versions' requests are counted in a window (`recorder`), which the
 * analysis judges (`analyse`, once a second) and every change of share starts anew.
 */
export class Rollout {
  /** Undefined for a rollout with a shadow only: every unpinned request is the stable version's. */
  readonly canary?: number;
  readonly stable: number;
  readonly shadow?: Shadow;
  readonly analysis?: RolloutAnalysis;
  #percent: number;
  /** Hundredths of a request owed to the canary. */
  #credit = 0;
  #window: { startedAt: number; canary: WindowSide; stable: WindowSide };
  /** Windows judged slow in a row at this share. */
  #slow = 0;
  readonly #events = new Map<string, { event: RolloutEvent["event"]; reason: string; count: number }>();

  constructor(config: RolloutConfig, stable: number, now: number) {
    this.canary = config.canary?.version;
    this.stable = stable;
    if (config.shadow) this.shadow = new Shadow(config.shadow);
    this.analysis = config.analysis;
    this.#percent = config.canary?.percent ?? 0;
    this.#window = { startedAt: now, canary: new WindowSide(), stable: new WindowSide() };
  }

  get percent(): number {
    return this.#percent;
  }

  view(now: number): RolloutView {
    const w = this.#window;
    return {
      stable: this.stable,
      ...(this.canary !== undefined && { canary: this.canary, percent: this.#percent, window: { elapsed_s: Math.round(now - w.startedAt) / 1000, slow_before: this.#slow, canary: w.canary.figures, stable: w.stable.figures } }),
      ...(this.shadow && { shadow: this.shadow.figures }),
    };
  }

  choose(key?: string): number {
    if (this.canary === undefined || this.#percent <= 0) return this.stable;
    if (this.#percent >= 100) return this.canary;
    if (key !== undefined) return bucket(key) < this.#percent * 100 ? this.canary : this.stable;
    this.#credit += this.#percent;
    if (this.#credit < 100) return this.stable;
    this.#credit -= 100;
    return this.canary;
  }

  /**
   * What counts `version`'s requests into the window (ModelStats.outcome), undefined for a version
   * outside the rollout. A request answered counts with its latency, one that failed on the
   * server's side as an error; refusals, cancellations and a client's bad requests not at all.
   */
  recorder(version: number): ((ms: number, failure?: FailureReason) => void) | undefined {
    const side = version === this.canary ? "canary" : version === this.stable ? "stable" : undefined;
    if (!side) return undefined;
    return (ms, failure) => {
      if (failure === undefined || failure === "BACKEND") this.#window[side].record(ms, failure !== undefined);
    };
  }

  /** A change by the API; the window starts anew. */
  change(change: RolloutChange, now: number): RolloutEvent {
    const percent = "promote" in change ? 100 : "abort" in change ? 0 : change.percent;
    const event = "promote" in change ? "promote" : "abort" in change ? "abort" : "set";
    return this.#apply({ event, reason: "api", percent }, now);
  }

  /** The analysis's look at the window so far: the event it applied, if any. */
  analyse(now: number): RolloutEvent | undefined {
    if (!this.analysis) return undefined;
    const w = this.#window;
    const plan = planRollout(this.analysis, this.#percent, now - w.startedAt, w.canary.figures, w.stable.figures, this.#slow);
    if (plan.kind === "wait") return undefined;
    if (plan.kind === "hold") return this.#apply({ event: "hold", reason: plan.reason, percent: this.#percent, detail: plan.detail }, now);
    if (plan.kind === "abort") return this.#apply({ event: "abort", reason: plan.reason, percent: 0, detail: plan.detail }, now);
    return this.#apply({ event: plan.percent >= 100 ? "promote" : "step", reason: "analysis", percent: plan.percent, detail: plan.detail }, now);
  }

  /** `version`'s side of the rollout and the share that side gets now (the dashboard shows it). */
  sideOf(version: number): { role: "canary" | "stable" | "shadow"; percent: number } | undefined {
    if (version === this.canary) return { role: "canary", percent: this.#percent };
    if (version === this.stable) return { role: "stable", percent: 100 - this.#percent };
    if (version === this.shadow?.version) return { role: "shadow", percent: this.shadow.percent };
    return undefined;
  }

  /** Counts of each event and reason so far. */
  events(): { event: RolloutEvent["event"]; reason: string; count: number }[] {
    return [...this.#events.values()].map((e) => ({ ...e }));
  }

  #apply(event: RolloutEvent, now: number): RolloutEvent {
    this.#percent = event.percent;
    this.#credit = 0;
    // A hold keeps the share, and counts; any change of share starts the count anew.
    this.#slow = event.event === "hold" ? this.#slow + 1 : 0;
    this.#window = { startedAt: now, canary: new WindowSide(), stable: new WindowSide() };
    const key = `${event.event}\u0000${event.reason}`;
    const counted = this.#events.get(key) ?? { event: event.event, reason: event.reason, count: 0 };
    counted.count++;
    this.#events.set(key, counted);
    return event;
  }
}

/** A key's place in 0..9999 (FNV-1a over its UTF-16 code units): stable across processes and restarts. */
function bucket(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % 10_000;
}
