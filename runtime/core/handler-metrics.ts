/** Label values of one series: each name the metric declared in `labelNames`. */
export type MetricLabels = Readonly<Record<string, string | number>>;

/** What a handler declares a metric with (prom-client's fields). */
export interface MetricSpec {
  /** The family's name (`[a-zA-Z_:][a-zA-Z0-9_:]*`); tensorfn's own prefixes are refused. */
  name: string;
  help: string;
  /** Labels the handler sets; tensorfn adds `model` (the function's name) to every series. */
  labelNames?: readonly string[];
}

export interface CounterMetric {
  inc(value?: number): void;
  inc(labels: MetricLabels, value?: number): void;
}

export interface GaugeMetric {
  set(value: number): void;
  set(labels: MetricLabels, value: number): void;
  inc(value?: number): void;
  inc(labels: MetricLabels, value?: number): void;
  dec(value?: number): void;
  dec(labels: MetricLabels, value?: number): void;
}

export interface HistogramMetric {
  observe(value: number): void;
  observe(labels: MetricLabels, value: number): void;
}

/**
 * A handler's own Prometheus metrics (`ctx.metrics`), served on `/metrics` beside tensorfn's, as
 * Triton's Python backend's custom metrics are. Declaring a metric again with the same fields
 * answers the one already declared (each instance's `initialize` may declare it); the function's
 * series go when it unloads.
 */
export interface HandlerMetrics {
  counter(spec: MetricSpec): CounterMetric;
  gauge(spec: MetricSpec): GaugeMetric;
  histogram(spec: MetricSpec & { buckets?: readonly number[] }): HistogramMetric;
}
