import { describe, expect, it } from "vitest";
import { repeatedLine } from "../../../runtime/core/repeated-line.ts";
import { FakeClock } from "../../support/fake-clock.ts";

describe("repeatedLine", () => {
  it("writes the first of a window, counts the rest, and writes the count when the window closes", () => {
    const clock = new FakeClock();
    const lines: string[] = [];
    const log = repeatedLine((m) => lines.push(m), clock, 10_000);
    for (let i = 0; i < 1000; i++) log(`aborted ${i}`);
    expect(lines).toEqual(["aborted 0"]);
    clock.advance(10_000);
    expect(lines).toEqual(["aborted 0", "… and 999 more like it in the last 10 s"]);
    // The next window opens with the next line, written at once.
    log("aborted 1000");
    expect(lines.at(-1)).toBe("aborted 1000");
  });

  it("writes nothing more for a line that came alone", () => {
    const clock = new FakeClock();
    const lines: string[] = [];
    const log = repeatedLine((m) => lines.push(m), clock, 10_000);
    log("once");
    clock.advance(60_000);
    log("again");
    clock.advance(60_000);
    expect(lines).toEqual(["once", "again"]);
  });
});
