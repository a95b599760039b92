/**
 * What a function's handler imports from the "tensorfn" package (package.json `exports`):
 * `HandlerError` and `reply`, and the types of the handler contract. Kept apart from mod.ts so a
 * handler's import loads these few lines, not the server.
 */
export { HandlerError, reply } from "./pipeline/handler-api.ts";
export type { FunctionAnswer, FunctionReply, FunctionRequest, Handler, HandlerContext, SequenceHookEvent } from "./pipeline/handler-api.ts";
export type { CounterMetric, DataType, GaugeMetric, HandlerMetrics, HistogramMetric, Logger, MetricLabels, MetricSpec, Tensor } from "./core/mod.ts";
export type { FunctionConfig } from "./config/mod.ts";
