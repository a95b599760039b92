import { afterEach, describe, expect, it, vi } from "vitest";
import { messageChannelSoon } from "../../../runtime/core/clock.ts";

/** Counts the channels opened and closed while `fn` runs, on the real MessageChannel. */
function countChannels() {
  const Real = globalThis.MessageChannel;
  const counts = { opened: 0, closed: 0 };
  globalThis.MessageChannel = class extends Real {
    constructor() {
      super();
      counts.opened++;
      const close = this.port1.close.bind(this.port1);
      this.port1.close = () => {
        counts.closed++;
        close();
      };
    }
  };
  return { counts, restore: () => void (globalThis.MessageChannel = Real) };
}

const step = (soon: (fn: () => void) => void) => new Promise<void>((resolve) => soon(resolve));

describe("messageChannelSoon()", () => {
  let restore = () => {};
  afterEach(() => {
    restore();
    vi.useRealTimers();
  });

  it("runs steps on a later turn in the order asked; one asked from inside a step waits for the next ping", async () => {
    const soon = messageChannelSoon();
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      soon(() => {
        order.push("a");
        soon(() => {
          order.push("c");
          resolve();
        });
        queueMicrotask(() => order.push("microtask after a"));
      });
      soon(() => order.push("b"));
      order.push("asked");
    });
    expect(order).toEqual(["asked", "a", "b", "microtask after a", "c"]);
  });

  it("keeps one channel for waits that follow each other and closes it once idle for 100 ms", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const channels = countChannels();
    restore = channels.restore;
    const soon = messageChannelSoon();
    for (let i = 0; i < 5; i++) await step(soon); // one wait polling five times
    vi.advanceTimersByTime(60);
    for (let i = 0; i < 3; i++) await step(soon); // the next wait, 60 ms later
    expect(channels.counts).toEqual({ opened: 1, closed: 0 });
    vi.advanceTimersByTime(60); // 60 ms after the last step: still open
    expect(channels.counts.closed).toBe(0);
    vi.advanceTimersByTime(50); // 110 ms after it: closed, so an idle process can exit
    expect(channels.counts).toEqual({ opened: 1, closed: 1 });
    await step(soon);
    expect(channels.counts.opened).toBe(2);
  });
});
