import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, TARGET_RUNTIME } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// The process's own families (prom-client's default metrics) and a handler's `ctx.metrics`, on the
// real server under the runtime TENSORFN_RUNTIME names: functions/word_count declares a histogram.

describe(`process metrics and ctx.metrics (${TARGET_RUNTIME})`, () => {
  let server: TestServer;
  const scrape = async () => (await fetch(`${server.url}/metrics`)).text();
  const sample = (text: string, series: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  beforeAll(async () => {
    server = await startServer({ repository: tempRepository("simple", "word_count") });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("serves the process's CPU, memory, descriptors and event-loop lag beside Triton's families", async () => {
    const text = await scrape();
    expect(text).toMatch(/^# TYPE nv_inference_request_success counter$/m);
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(20_000_000);
    expect(sample(text, "process_open_fds")).toBeGreaterThan(3);
    expect(text).toMatch(/^# TYPE nodejs_eventloop_lag_seconds gauge$/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);
    // One family, one HELP/TYPE pair: Prometheus refuses a scrape that repeats one.
    const types = [...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]);
    expect(types.length).toBe(new Set(types).size);
  });

  it("serves a handler's own histogram with the function's name, and drops it when the function unloads", async () => {
    for (const text of ["one two three", "four", "a b c d e f g h i j k l"]) {
      const res = await fetch(`${server.url}/v1/functions/word_count`, { method: "POST", body: JSON.stringify({ text }) });
      expect(res.status).toBe(200);
    }
    let text = await scrape();
    expect(text).toMatch(/^# TYPE word_count_words histogram$/m);
    expect(sample(text, 'word_count_words_count{model="word_count"}')).toBe(3);
    expect(sample(text, 'word_count_words_sum{model="word_count"}')).toBe(16);
    expect(sample(text, 'word_count_words_bucket{le="10",model="word_count"}')).toBe(2);
    const unload = await fetch(`${server.url}/v2/repository/models/word_count/unload`, { method: "POST" });
    expect(unload.status).toBe(200);
    text = await scrape();
    expect(text).not.toContain("word_count_words");
    // Loaded again (lazy: its next request), it declares the histogram anew and counts from zero.
    await fetch(`${server.url}/v1/functions/word_count`, { method: "POST", body: JSON.stringify({ text: "again" }) });
    expect(sample(await scrape(), 'word_count_words_count{model="word_count"}')).toBe(1);
  });
});
