import { describe, expect, it } from "vitest";
import { Drain } from "../../../runtime/scheduler/queue/drain.ts";

describe("Drain (every scheduler's stop)", () => {
  it("resolves a stop with nothing in flight at once, and one with work in flight at the first settled that sees none", async () => {
    expect(new Drain().stopping).toBe(false);
    const idle = new Drain();
    await idle.stop(0);
    expect(idle.stopping).toBe(true);

    const busy = new Drain();
    busy.settled(0); // not stopping yet: nothing to wake
    let done = false;
    const both = [busy.stop(2).then(() => (done = true)), busy.stop(2)];
    busy.settled(1);
    await Promise.resolve();
    expect(done).toBe(false);
    busy.settled(0);
    await Promise.all(both);
    expect(done).toBe(true);
  });
});
