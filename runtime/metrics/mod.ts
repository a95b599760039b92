export { COLD_START_BUCKETS, LATENCY_BUCKETS, ModelStats } from "./model-stats.ts";
export type { Duration, FailureReason, Histogram, LifecycleEvent } from "./model-stats.ts";
export { createPrometheus } from "./prometheus.ts";
export type { MetricsEntry, MetricsSource, Prometheus } from "./prometheus.ts";
export { observeAll, TraceRecorder } from "./trace-recorder.ts";
export type { TraceEvent } from "./trace-recorder.ts";
export { RateHistory } from "./rate-history.ts";
