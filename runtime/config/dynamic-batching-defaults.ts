import type { DynamicBatching } from "./function-config.ts";

/** `dynamic_batching: {}` with every field at Triton's default. */
export function defaultDynamicBatching(): DynamicBatching {
  return {
    preferred_batch_size: [],
    max_queue_delay_microseconds: 0,
    preserve_ordering: false,
    priority_levels: 0,
    default_priority_level: 0,
    default_queue_policy: { timeout_action: "REJECT", default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: 0 },
    priority_queue_policy: {},
  };
}
