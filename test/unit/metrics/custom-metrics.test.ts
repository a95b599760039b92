import { describe, expect, it } from "vitest";
import { CustomMetrics, createPrometheus, MAX_SERIES_PER_FAMILY } from "../../../runtime/metrics/mod.ts";

describe("CustomMetrics (ctx.metrics)", () => {
  it("writes counters, gauges and histograms with the function's name as the model label", async () => {
    const custom = new CustomMetrics();
    await custom.load();
    const m = custom.forFunction("ocr");
    const words = m.counter({ name: "ocr_words_total", help: "Words read", labelNames: ["lang"] });
    words.inc({ lang: "en" }, 3);
    words.inc({ lang: "en" });
    m.gauge({ name: "ocr_queue_depth", help: "Depth" }).set(7);
    const h = m.histogram({ name: "ocr_box_count", help: "Boxes per page", buckets: [1, 10, 100] });
    h.observe(5);
    h.observe(50);
    const text = await custom.render();
    expect(text).toContain('ocr_words_total{lang="en",model="ocr"} 4');
    expect(text).toContain('ocr_queue_depth{model="ocr"} 7');
    expect(text).toContain('ocr_box_count_bucket{le="10",model="ocr"} 1');
    expect(text).toContain('ocr_box_count_count{model="ocr"} 2');
  });

  it("answers the same metric to a second declaration with the same fields, and refuses one that differs", async () => {
    const custom = new CustomMetrics();
    await custom.load();
    const a = custom.forFunction("a");
    a.counter({ name: "calls_total", help: "Calls" }).inc();
    expect(() => a.counter({ name: "calls_total", help: "Calls" })).not.toThrow();
    expect(() => custom.forFunction("b").gauge({ name: "calls_total", help: "Calls" })).toThrow(/already declared by function 'a' as a counter/);
    expect(() => a.counter({ name: "calls_total", help: "Other" })).toThrow(/already declared as a counter/);
  });

  it("refuses bad names, tensorfn's prefixes, the model label and bad buckets, naming the function", async () => {
    const custom = new CustomMetrics();
    await custom.load();
    const m = custom.forFunction("fn");
    expect(() => m.counter({ name: "bad name", help: "h" })).toThrow(/function 'fn': ctx.metrics.counter\("bad name"\): name must match/);
    for (const name of ["nv_gpu_thing", "tensorfn_x", "vllm:x", "process_x", "nodejs_x"]) expect(() => m.gauge({ name, help: "h" })).toThrow(/tensorfn's own families/);
    expect(() => m.counter({ name: "x_total", help: "h", labelNames: ["model"] })).toThrow(/'model' label is tensorfn's/);
    expect(() => m.counter({ name: "x_total", help: "h", labelNames: ["__x"] })).toThrow(/label name/);
    expect(() => m.histogram({ name: "x", help: "h", buckets: [2, 1] })).toThrow(/increasing order/);
    expect(() => m.counter({ name: "x_total", help: "" })).toThrow(/help/);
    expect(() => m.counter(undefined as never)).toThrow(/takes \{ name, help/);
  });

  it("remove() drops one function's series, keeps another's, and leaves the removed handler's metrics inert", async () => {
    const custom = new CustomMetrics();
    await custom.load();
    const a = custom.forFunction("a").counter({ name: "shared_total", help: "Shared", labelNames: ["kind"] });
    const b = custom.forFunction("b").counter({ name: "shared_total", help: "Shared", labelNames: ["kind"] });
    custom.forFunction("a").histogram({ name: "only_a", help: "A" }).observe(1);
    a.inc({ kind: "x" });
    a.inc({ kind: "y" });
    b.inc({ kind: "x" }, 2);
    await custom.remove("a");
    a.inc({ kind: "x" });
    const text = await custom.render();
    expect(text).not.toContain('model="a"');
    expect(text).not.toContain("only_a");
    expect(text).toContain('shared_total{kind="x",model="b"} 2');
    // Loaded again: a new handler declares and counts from zero.
    custom.forFunction("a").counter({ name: "shared_total", help: "Shared", labelNames: ["kind"] }).inc({ kind: "x" });
    expect(await custom.render()).toContain('shared_total{kind="x",model="a"} 1');
    await custom.remove("b");
    await custom.remove("a");
    expect(await custom.render()).toBe("");
  });

  it("is appended to tensorfn's own families by an asynchronous scrape", async () => {
    const custom = new CustomMetrics();
    await custom.load();
    custom.forFunction("f").counter({ name: "my_total", help: "Mine" }).inc();
    const prometheus = createPrometheus({ entries: () => [], budgets: {}, extra: [() => custom.render(), () => "# TYPE proc_x gauge\nproc_x 1"] });
    const text = new TextDecoder().decode(await prometheus.renderBytesAsync());
    expect(text.startsWith(prometheus.render())).toBe(true);
    expect(text).toContain('my_total{model="f"} 1');
    expect(text.endsWith("proc_x 1\n")).toBe(true);
  });
});

describe("CustomMetrics' series limit", () => {
  it("drops updates of new label sets past MAX_SERIES_PER_FAMILY per function, says so once, and keeps the ones it has", async () => {
    const warnings: string[] = [];
    const custom = new CustomMetrics({ log: { warn: (m) => warnings.push(m) } });
    await custom.load();
    const c = custom.forFunction("f").counter({ name: "by_user_total", help: "h", labelNames: ["user"] });
    for (let i = 0; i < MAX_SERIES_PER_FAMILY + 50; i++) c.inc({ user: `u${i}` });
    c.inc({ user: "u0" }, 4);
    const text = await custom.render();
    expect(text.split("\n").filter((l) => l.startsWith("by_user_total{"))).toHaveLength(MAX_SERIES_PER_FAMILY);
    expect(text).toContain('by_user_total{user="u0",model="f"} 5');
    expect(warnings).toEqual([`function 'f': ctx.metrics by_user_total holds ${MAX_SERIES_PER_FAMILY} label sets, its limit; updates of new ones are dropped (are its labels taken from request data?)`]);
    // Another function has its own allowance.
    custom.forFunction("g").counter({ name: "by_user_total", help: "h", labelNames: ["user"] }).inc({ user: "x" });
    expect(await custom.render()).toContain('by_user_total{user="x",model="g"} 1');
  });
});
