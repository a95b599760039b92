import { invalidArg } from "../core/mod.ts";
import type { RolloutChange } from "../lifecycle/mod.ts";

/** A change from an API body: exactly one of `percent` (0 to 100), `promote: true`, `abort: true`. */
export function rolloutChange(body: Record<string, unknown>): RolloutChange {
  const keys = Object.keys(body);
  if (keys.length !== 1 || !["percent", "promote", "abort"].includes(keys[0]!)) {
    throw invalidArg(`a rollout change is one of {"percent": 0..100}, {"promote": true} or {"abort": true}, not ${JSON.stringify(body).slice(0, 200)}`);
  }
  const [key, value] = [keys[0]!, body[keys[0]!]];
  if (key === "percent") {
    if (typeof value !== "number" || !(value >= 0 && value <= 100)) throw invalidArg(`percent must be a number from 0 to 100, not ${JSON.stringify(value)}`);
    return { percent: value };
  }
  if (value !== true) throw invalidArg(`${key} must be true, not ${JSON.stringify(value)}`);
  return key === "promote" ? { promote: true } : { abort: true };
}
