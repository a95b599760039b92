import { describe, expect, it } from "vitest";
import { followOutput } from "../../../adapters/output-stall.ts";

describe("followOutput (--write-timeout on both ports)", () => {
  it("drops a connection whose answers were not taken for longer than the timeout, naming the bytes and seconds", () => {
    let state = followOutput(undefined, 1000, 0, 5000);
    expect(state).toEqual({ waiting: { bytes: 1000, since: 0 } });
    state = followOutput(state.waiting, 1200, 3000, 5000); // more queued, none taken: the clock runs on
    expect(state).toEqual({ waiting: { bytes: 1200, since: 0 } });
    state = followOutput(state.waiting, 1200, 5001, 5000);
    expect(state.stalled).toBe("1200 bytes of its answers untaken for 5 s (--write-timeout)");
  });

  it("keeps a slow reader: any bytes taken restart the clock, and nothing waiting forgets it", () => {
    let state = followOutput(undefined, 1000, 0, 5000);
    state = followOutput(state.waiting, 900, 4000, 5000);
    expect(state).toEqual({ waiting: { bytes: 900, since: 4000 } });
    state = followOutput(state.waiting, 900, 8000, 5000);
    expect(state.stalled).toBeUndefined();
    expect(followOutput(state.waiting, 0, 20_000, 5000)).toEqual({});
  });
});
