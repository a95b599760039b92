export { ModelStats } from "./model-stats.ts";
export type { Duration } from "./model-stats.ts";
