export type { ModelInstance, ScheduledRequest, ScheduledResult, Scheduler } from "./scheduler.ts";
export type { ExecutionTiming, SchedulerObserver } from "./scheduler-observer.ts";
export type { LevelPolicy } from "./queue/priority-queue.ts";
export { PriorityQueue } from "./queue/priority-queue.ts";
export { AdaptiveDelay } from "./dynamic/adaptive-delay.ts";
export { DynamicBatcher } from "./dynamic/dynamic-batcher.ts";
export type { DynamicBatcherOptions } from "./dynamic/dynamic-batcher.ts";
export { ResourceLimiter } from "./resource-limiter.ts";
export type { ResourceClaim, ResourceNeeds, ResourceOverride } from "./resource-limiter.ts";
