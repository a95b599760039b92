import { describe, expect, it } from "vitest";
import { collectAfterRelease } from "../../../adapters/collect-after-release.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("collectAfterRelease()", () => {
  it("collects once, a little after the last of a burst of releases, then at most once per interval", async () => {
    let collections = 0;
    const released = collectAfterRelease(() => collections++, { delayMs: 20, everyMs: 300 });
    for (let i = 0; i < 5; i++) {
      released();
      await sleep(10); // the burst's connections close one by one
    }
    expect(collections).toBe(0); // not before the burst's last
    await sleep(80);
    expect(collections).toBe(1);
    released();
    released();
    await sleep(80);
    expect(collections).toBe(1); // within the interval: waits for it
    await sleep(300);
    expect(collections).toBe(2);
  });

  it("does not put a collection off for good while releases keep coming", async () => {
    let collections = 0;
    const released = collectAfterRelease(() => collections++, { delayMs: 20, everyMs: 100 });
    const started = performance.now();
    while (performance.now() - started < 250) {
      released();
      await sleep(5);
    }
    expect(collections).toBeGreaterThanOrEqual(1);
  });

  it("is a no-op where the platform cannot collect", () => {
    expect(() => collectAfterRelease(undefined)()).not.toThrow();
  });
});
