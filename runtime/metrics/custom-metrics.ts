import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import { RuntimeError } from "../core/mod.ts";
import type { CounterMetric, GaugeMetric, HandlerMetrics, HistogramMetric, Logger, MetricLabels, MetricSpec } from "../core/mod.ts";

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** The families tensorfn writes (its own, Triton's, vLLM's, the GPUs') and prom-client's process ones. */
const RESERVED_PREFIXES = ["nv_", "tensorfn_", "vllm:", "process_", "nodejs_"];
/** Custom families in all, over every function: a handler declaring names without end runs out here, not out of memory. */
export const MAX_CUSTOM_FAMILIES = 1024;
const MAX_LABELS = 16;
/**
 * Series one function may hold in one family: a handler that labels with request data (an id, a
 * user's text) would otherwise let its clients grow the server's memory and every scrape without end.
 * Past it, updates of new label values are dropped and the log says so once.
 */
export const MAX_SERIES_PER_FAMILY = 10_000;
const MAX_BUCKETS = 64;

type Kind = "counter" | "gauge" | "histogram";
/** prom-client once loaded: instances made after that have it at once. */
let promClient: typeof import("prom-client") | undefined;

/**
 * Hands over prom-client where it was imported statically (a function process: an await before its
 * message handler is set would let a message through unheard, as Bun delivers them).
 */
export function providePromClient(prom: typeof import("prom-client")): void {
  promClient ??= prom;
}
type Metric = Counter<string> | Gauge<string> | Histogram<string>;

interface Family {
  kind: Kind;
  /** Help, label names and buckets: what a second declaration must repeat. */
  shape: string;
  metric: Metric;
  /** Functions whose series it holds. */
  users: Set<string>;
  name: string;
  labelNames: readonly string[];
  /** Each function's label-value sets in this family, to hold MAX_SERIES_PER_FAMILY. */
  series: Map<string, Set<string>>;
}

/**
 * Handlers' own metrics (`ctx.metrics`), kept in a prom-client registry: the API Node developers
 * know, written out on scrape after tensorfn's own families. A family is shared by every function
 * that declares it with the same fields, each function's series told apart by the `model` label
 * tensorfn adds (Triton's label for the function); `remove` drops one function's series (an unload),
 * and the family with its last user.
 */
export class CustomMetrics {
  /** prom-client, loaded with the first handler (`load`): a server without one never pays its import. */
  #prom?: typeof import("prom-client");
  #registry?: Registry;
  readonly #families = new Map<string, Family>();
  /** Bumped by `remove`: what a function's handler declared before its unload records nothing after it. */
  readonly #generations = new Map<string, number>();
  readonly #warned = new Set<string>();
  readonly #log?: Pick<Logger, "warn">;

  constructor(options: { log?: Pick<Logger, "warn"> } = {}) {
    this.#log = options.log;
    if (promClient) this.#use(promClient);
  }

  /** Loads prom-client (once per process); `forFunction` needs it done (a handler's load awaits it). */
  async load(): Promise<void> {
    promClient ??= await import("prom-client");
    if (!this.#prom) this.#use(promClient);
  }

  #use(prom: typeof import("prom-client")): void {
    this.#prom = prom;
    this.#registry = new prom.Registry();
  }

  /** `ctx.metrics` for the handler of function `fn` (after `load`). */
  forFunction(fn: string): HandlerMetrics {
    if (!this.#prom) throw new RuntimeError("INTERNAL", "CustomMetrics.forFunction before load()");
    const generation = this.#generations.get(fn) ?? 0;
    const live = () => (this.#generations.get(fn) ?? 0) === generation;
    // prom-client's own overloads: (value) or (labels, value).
    const update = (family: Family, apply: (labels: Record<string, string | number>, value: number | undefined) => void) => (a?: MetricLabels | number, b?: number) => {
      if (!live()) return;
      const labels = typeof a === "object" && a !== null ? a : undefined;
      if (labels && !this.#admits(fn, family, labels)) return;
      apply({ ...labels, model: fn }, labels ? b : (a as number | undefined));
    };
    return {
      counter: (spec) => {
        const family = this.#declare(fn, "counter", spec);
        const c = family.metric as Counter<string>;
        return { inc: update(family, (l, v) => c.inc(l, v ?? 1)) } as CounterMetric;
      },
      gauge: (spec) => {
        const family = this.#declare(fn, "gauge", spec);
        const g = family.metric as Gauge<string>;
        return {
          set: update(family, (l, v) => g.set(l, v as number)),
          inc: update(family, (l, v) => g.inc(l, v ?? 1)),
          dec: update(family, (l, v) => g.dec(l, v ?? 1)),
        } as GaugeMetric;
      },
      histogram: (spec) => {
        const family = this.#declare(fn, "histogram", spec);
        const h = family.metric as Histogram<string>;
        return { observe: update(family, (l, v) => h.observe(l, v as number)) } as HistogramMetric;
      },
    };
  }

  /** Whether `fn` may update the series of `labels` in `family`: one it has, or a new one within MAX_SERIES_PER_FAMILY. */
  #admits(fn: string, family: Family, labels: MetricLabels): boolean {
    const key = family.labelNames.map((n) => String(labels[n])).join("\u0000");
    let held = family.series.get(fn);
    if (!held) family.series.set(fn, (held = new Set()));
    if (held.has(key)) return true;
    if (held.size >= MAX_SERIES_PER_FAMILY) {
      if (!this.#warned.has(`${fn}\u0000${family.name}`)) {
        this.#warned.add(`${fn}\u0000${family.name}`);
        this.#log?.warn(`function '${fn}': ctx.metrics ${family.name} holds ${MAX_SERIES_PER_FAMILY} label sets, its limit; updates of new ones are dropped (are its labels taken from request data?)`);
      }
      return false;
    }
    held.add(key);
    return true;
  }

  /** Drops `fn`'s series (the family too when no other function uses it); its handler's metrics go inert. */
  async remove(fn: string): Promise<void> {
    this.#generations.set(fn, (this.#generations.get(fn) ?? 0) + 1);
    for (const [name, family] of this.#families) {
      if (!family.users.delete(fn)) continue;
      family.series.delete(fn);
      if (family.users.size === 0) {
        this.#registry!.removeSingleMetric(name);
        this.#families.delete(name);
        continue;
      }
      const sets = new Map<string, Record<string, string | number>>();
      for (const { labels } of (await family.metric.get()).values) {
        if (labels.model !== fn) continue;
        const { le: _le, ...series } = labels as Record<string, string | number>;
        sets.set(JSON.stringify(series), series);
      }
      for (const series of sets.values()) family.metric.remove(series);
    }
  }

  /** Every custom family in Prometheus's text format ("" when there is none). */
  async render(): Promise<string> {
    return this.#families.size === 0 ? "" : await this.#registry!.metrics();
  }

  #declare(fn: string, kind: Kind, spec: MetricSpec & { buckets?: readonly number[] }): Family {
    const fail = (problem: string) => new RuntimeError("INTERNAL", `function '${fn}': ctx.metrics.${kind}(${typeof spec?.name === "string" ? JSON.stringify(spec.name.slice(0, 100)) : ""}): ${problem}`);
    if (typeof spec !== "object" || spec === null) throw fail("takes { name, help, labelNames? }");
    const { name, help } = spec;
    if (typeof name !== "string" || !NAME.test(name) || name.length > 200) throw fail("name must match [a-zA-Z_:][a-zA-Z0-9_:]* (at most 200 characters)");
    const reserved = RESERVED_PREFIXES.find((p) => name.startsWith(p));
    if (reserved) throw fail(`names starting with '${reserved}' are tensorfn's own families`);
    if (typeof help !== "string" || help.length === 0 || help.length > 1000) throw fail("help must be a non-empty string (at most 1000 characters)");
    const labelNames = spec.labelNames ?? [];
    if (!Array.isArray(labelNames) || labelNames.length > MAX_LABELS) throw fail(`labelNames must be an array of at most ${MAX_LABELS} names`);
    for (const label of labelNames) {
      if (typeof label !== "string" || !LABEL.test(label) || label.startsWith("__")) throw fail(`label name ${JSON.stringify(label)} must match [a-zA-Z_][a-zA-Z0-9_]* and not start with '__'`);
      if (label === "model") throw fail("the 'model' label is tensorfn's: every series carries the function's name in it");
      if (kind === "histogram" && label === "le") throw fail("a histogram cannot have a label 'le'");
    }
    if (new Set(labelNames).size !== labelNames.length) throw fail("labelNames repeats a name");
    let buckets: number[] | undefined;
    if (kind === "histogram" && spec.buckets !== undefined) {
      const b = spec.buckets;
      const increasing = Array.isArray(b) && b.every((x, i) => typeof x === "number" && Number.isFinite(x) && (i === 0 || x > b[i - 1]!));
      if (!increasing || b.length === 0 || b.length > MAX_BUCKETS) throw fail(`buckets must be 1 to ${MAX_BUCKETS} finite numbers in increasing order`);
      buckets = [...b];
    }
    const shape = JSON.stringify([help, labelNames, buckets ?? null]);
    const known = this.#families.get(name);
    if (known) {
      if (known.kind !== kind || known.shape !== shape) throw fail(`already declared${known.users.has(fn) ? "" : ` by function '${[...known.users][0]}'`} as a ${known.kind} with other help, labels or buckets`);
      known.users.add(fn);
      return known;
    }
    if (this.#families.size >= MAX_CUSTOM_FAMILIES) throw fail(`the server holds ${MAX_CUSTOM_FAMILIES} custom metric families, its limit`);
    const options = { name, help, labelNames: ["model", ...labelNames], registers: [this.#registry!] };
    const { Counter, Gauge, Histogram } = this.#prom!;
    const metric = kind === "counter" ? new Counter(options) : kind === "gauge" ? new Gauge(options) : new Histogram({ ...options, ...(buckets ? { buckets } : {}) });
    const family: Family = { name, kind, shape, metric, users: new Set([fn]), labelNames: [...labelNames], series: new Map() };
    this.#families.set(name, family);
    return family;
  }
}
