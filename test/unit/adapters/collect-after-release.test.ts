import { describe, expect, it } from "vitest";
import { collectAfterRelease } from "../../../adapters/collect-after-release.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("collectAfterRelease()", () => {
  it("collects once, a little after the first of many releases, then at most once per interval", async () => {
    let collections = 0;
    const released = collectAfterRelease(() => collections++, { delayMs: 20, everyMs: 300 });
    for (let i = 0; i < 50; i++) released();
    expect(collections).toBe(0); // not in the close's own turn
    await sleep(80);
    expect(collections).toBe(1);
    released();
    released();
    await sleep(80);
    expect(collections).toBe(1); // within the interval: waits for it
    await sleep(300);
    expect(collections).toBe(2);
  });

  it("is a no-op where the platform cannot collect", () => {
    expect(() => collectAfterRelease(undefined)()).not.toThrow();
  });
});
