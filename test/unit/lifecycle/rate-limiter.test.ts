import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../../runtime/lifecycle/rate-limiter.ts";
import { FakeClock } from "../../support/fake-clock.ts";

const passes = (limiter: RateLimiter, n: number, key?: string) => Array.from({ length: n }, () => limiter.take(key).ok).filter(Boolean).length;

describe("RateLimiter", () => {
  it("lets a burst through, then one request per 1/rate seconds, and says when to retry", () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter({ requestsPerSecond: 4, burst: 3, clock });
    expect(passes(limiter, 5)).toBe(3);
    expect(limiter.take()).toEqual({ ok: false, retryAfterMs: 250 });
    clock.advance(100);
    expect(limiter.take()).toEqual({ ok: false, retryAfterMs: 150 });
    clock.advance(150);
    expect(limiter.take().ok).toBe(true);
    expect(limiter.take().ok).toBe(false);
    // Drained, then a minute of 4/s passes exactly 240 however the requests are paced.
    expect(limiter.take().ok).toBe(false);
    let passed = 0;
    for (let ms = 0; ms < 60_000; ms += 50) {
      clock.advance(50);
      passed += limiter.take().ok ? 1 : 0;
      passed += limiter.take().ok ? 1 : 0;
    }
    expect(passed).toBe(240);
  });

  it("never holds more than the burst, however long it was idle", () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter({ requestsPerSecond: 10, burst: 2, clock });
    clock.advance(3_600_000);
    expect(passes(limiter, 10)).toBe(2);
  });

  it("keeps one bucket per key", () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter({ requestsPerSecond: 1, burst: 1, clock });
    expect(passes(limiter, 3, "tenant-a")).toBe(1);
    expect(passes(limiter, 3, "tenant-b")).toBe(1);
    expect(passes(limiter, 3, "")).toBe(1);
  });

  it("stays within maxKeys, forgetting refilled buckets before draining ones", () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter({ requestsPerSecond: 1, burst: 2, clock, maxKeys: 3 });
    expect(passes(limiter, 2, "x")).toBe(2); // empty until t = 2 s
    clock.advance(500);
    expect(passes(limiter, 1, "idle")).toBe(1); // full again at t = 1.5 s
    clock.advance(1100);
    limiter.take("new"); // a fourth key: "idle" (refilled) goes, not "x" (the least recent, still refilling)
    expect(limiter.size).toBe(3);
    expect(passes(limiter, 2, "x")).toBe(1); // 1.6 tokens: remembered; a forgotten x would pass 2
    for (let i = 0; i < 50; i++) {
      limiter.take(`flood-${i}`);
      expect(limiter.size).toBeLessThanOrEqual(3);
    }
  });
});
