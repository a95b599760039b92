import { describe, expect, it } from "vitest";
import { intervals, runClosedLoop, runOpenLoop } from "../../../adapters/bench/load-generator.ts";
import type { Send, StepSamples } from "../../../adapters/bench/load-generator.ts";
import { summarizeStep } from "../../../adapters/bench/step-summary.ts";
import { FakeClock } from "../../support/fake-clock.ts";

/** Lets every pending promise continuation run (setImmediate comes after the microtask queue). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A fake server on the fake clock: every request answers after `latencyMs`; counts what is in flight. */
function fakeServer(clock: FakeClock, latencyMs: number, fail?: (n: number) => string | undefined) {
  const state = { inFlight: 0, peak: 0, sent: 0 };
  const send: Send = () =>
    new Promise((resolve) => {
      const n = ++state.sent;
      state.inFlight++;
      state.peak = Math.max(state.peak, state.inFlight);
      clock.setTimeout(() => {
        state.inFlight--;
        resolve(fail?.(n));
      }, latencyMs);
    });
  return { state, send };
}

/** Runs `start()` to completion, advancing the fake clock 1 ms at a time; `each` sees every ms. */
async function drive(clock: FakeClock, start: () => Promise<StepSamples>, each?: (now: number) => void): Promise<StepSamples> {
  let result: StepSamples | undefined;
  void start().then((r) => (result = r));
  for (let i = 0; i < 10_000 && result === undefined; i++) {
    await flush();
    each?.(clock.now());
    clock.advance(1);
  }
  await flush();
  if (!result) throw new Error("the driver did not finish");
  return result;
}

describe("runClosedLoop()", () => {
  it("keeps exactly N requests in flight, back to back, until the window closes", async () => {
    const clock = new FakeClock();
    const { state, send } = fakeServer(clock, 7);
    const seen = new Set<number>();
    const step = await drive(clock, () => runClosedLoop(send, 4, { warmupMs: 20, durationMs: 100, clock }), (now) => {
      if (now < 120) seen.add(state.inFlight);
    });
    expect([...seen]).toEqual([4]);
    expect(state.peak).toBe(4);
    expect(state.inFlight).toBe(0);
    expect(step).toMatchObject({ windowStart: 20, windowEnd: 120, maxOutstanding: 4, capHits: 0 });
    // Sends at 0, 7, 14, …; those started at 21…119 (15 rounds of 4) are the window's.
    const summary = summarizeStep(step, 8);
    expect(summary.requests).toBe(60);
    expect(summary.reqPerS).toBe(600);
    expect(summary.inferPerS).toBe(4800);
    expect(summary.latencyMs).toMatchObject({ p50: 7, p99: 7, max: 7 });
  });

  it("waits for the warmup, then calls onMeasureStart before the window and onMeasureEnd after it", async () => {
    const clock = new FakeClock();
    const { send } = fakeServer(clock, 5);
    const calls: string[] = [];
    const step = await drive(clock, () =>
      runClosedLoop(send, 1, {
        warmupMs: 30,
        durationMs: 50,
        clock,
        onMeasureStart: async () => void calls.push(`start@${clock.now()}`),
        onMeasureEnd: async () => void calls.push(`end@${clock.now()}`),
      }),
    );
    expect(calls).toEqual(["start@30", "end@80"]);
    expect(step.samples.every((s) => s.end >= 30)).toBe(true);
  });

  it("counts failures and rejections without stopping, keeping the first message", async () => {
    const clock = new FakeClock();
    const { send } = fakeServer(clock, 10, (n) => (n % 3 === 0 ? `HTTP 503: busy #${n}` : undefined));
    let calls = 0;
    const flaky: Send = () => (++calls === 20 ? Promise.reject(new Error("socket hang up")) : send());
    const step = await drive(clock, () => runClosedLoop(flaky, 1, { warmupMs: 0, durationMs: 300, clock }));
    const summary = summarizeStep(step, 1);
    expect(summary.errors).toBeGreaterThan(5);
    expect(summary.firstError).toBe("HTTP 503: busy #3");
    expect(step.samples.some((s) => s.error === "socket hang up")).toBe(true);
    expect(summary.requests).toBeGreaterThan(10);
  });
});

describe("runOpenLoop()", () => {
  it("sends on schedule regardless of answers and measures latency from the scheduled time", async () => {
    const clock = new FakeClock();
    const { state, send } = fakeServer(clock, 25);
    const step = await drive(clock, () => runOpenLoop(send, { ratePerS: 100, warmupMs: 50, durationMs: 200, clock }));
    expect(state.peak).toBe(3);
    const summary = summarizeStep(step, 1);
    expect(summary.requests).toBe(20);
    expect(summary.reqPerS).toBe(100);
    expect(summary.latencyMs).toMatchObject({ p50: 25, p99: 25 });
    expect(step.samples.filter((s) => s.start >= 50 && s.start < 250).map((s) => s.start)).toEqual(Array.from({ length: 20 }, (_, i) => 50 + 10 * i));
    expect(step).toMatchObject({ capHits: 0, unsent: 0, maxOutstanding: 3 });
  });

  it("holds sends at the outstanding cap and charges the wait to their latency", async () => {
    const clock = new FakeClock();
    const { state, send } = fakeServer(clock, 25);
    const step = await drive(clock, () => runOpenLoop(send, { ratePerS: 100, maxOutstanding: 2, warmupMs: 50, durationMs: 200, clock }));
    expect(state.peak).toBe(2);
    expect(step.capHits).toBeGreaterThan(0);
    expect(step.unsent).toBeGreaterThan(0);
    const latencies = step.samples.filter((s) => s.start >= step.windowStart).map((s) => s.end - s.start);
    // The server answers 2 per 25 ms (80/s) against 100/s asked for: the backlog grows all along.
    expect(latencies.at(-1)!).toBeGreaterThan(latencies[0]! + 30);
    const { reqPerS } = summarizeStep(step, 1);
    expect(reqPerS).toBeGreaterThanOrEqual(80);
    expect(reqPerS).toBeLessThanOrEqual(85);
  });
});

describe("intervals()", () => {
  it("spaces a constant schedule at 1000 / rate ms", () => {
    const gap = intervals(400, "constant", 1);
    expect([gap(), gap()]).toEqual([2.5, 2.5]);
  });

  it("draws Poisson gaps with the right mean, the same for the same seed", () => {
    const gap = intervals(100, "poisson", 7);
    const gaps = Array.from({ length: 20_000 }, gap);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(9.7);
    expect(mean).toBeLessThan(10.3);
    expect(new Set(gaps.slice(0, 10)).size).toBe(10);
    const again = intervals(100, "poisson", 7);
    expect(gaps.slice(0, 5)).toEqual(Array.from({ length: 5 }, again));
  });
});
