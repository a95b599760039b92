export type { ModelInstance, ScheduledRequest, ScheduledResult, Scheduler } from "./scheduler.ts";
export { DynamicBatcher } from "./dynamic/dynamic-batcher.ts";
export type { DynamicBatcherOptions } from "./dynamic/dynamic-batcher.ts";
