import { describe, expect, it } from "vitest";
import { SnapshotBroadcaster } from "../../../runtime/http/dashboard/snapshot-broadcaster.ts";
import { FakeClock } from "../../support/fake-clock.ts";

function setup(maxStreams = 32) {
  const clock = new FakeClock();
  let builds = 0;
  const broadcaster = new SnapshotBroadcaster(() => ({ tick: ++builds }), { clock, intervalMs: 1000, maxStreams });
  return { clock, broadcaster, builds: () => builds };
}

async function next(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const { value } = await reader.read();
  return new TextDecoder().decode(value);
}

describe("SnapshotBroadcaster", () => {
  it("builds one snapshot per tick for all open streams, and runs no timer while none is open", async () => {
    const { clock, broadcaster, builds } = setup();
    expect(clock.pendingTimers()).toBe(0);
    const readers = [1, 2, 3].map(() => broadcaster.open()!.getReader());
    expect(builds()).toBe(1);
    for (const r of readers) expect(await next(r)).toBe('data: {"tick":1}\n\n');
    for (const tick of [2, 3]) {
      clock.advance(1000);
      for (const r of readers) expect(await next(r)).toBe(`data: {"tick":${tick}}\n\n`);
    }
    expect(builds()).toBe(3);
    for (const r of readers) await r.cancel();
    expect(broadcaster.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(10_000);
    expect(builds()).toBe(3);
  });

  it("reaches every one of many streams each tick, writing them a slice at a time", async () => {
    const { clock, broadcaster, builds } = setup(200);
    const readers = Array.from({ length: 150 }, () => broadcaster.open()!.getReader());
    for (const r of readers) await next(r);
    clock.advance(1000);
    expect(builds()).toBe(2);
    for (const r of readers) expect(await next(r)).toBe('data: {"tick":2}\n\n');
    broadcaster.close();
  });

  it("gives a late joiner the latest snapshot without building another", async () => {
    const { clock, broadcaster, builds } = setup();
    const first = broadcaster.open()!.getReader();
    clock.advance(1000);
    const late = broadcaster.open()!.getReader();
    expect(builds()).toBe(2);
    expect(await next(late)).toBe('data: {"tick":2}\n\n');
    await first.cancel();
    await late.cancel();
  });

  it("open() returns undefined at the cap, and frees a place when a stream is cancelled or its request aborts", async () => {
    const { broadcaster } = setup(2);
    const a = broadcaster.open()!;
    const abort = new AbortController();
    broadcaster.open(abort.signal);
    expect(broadcaster.open()).toBeUndefined();
    await a.cancel();
    const c = broadcaster.open();
    expect(c).toBeDefined();
    expect(broadcaster.open()).toBeUndefined();
    abort.abort();
    expect(broadcaster.size).toBe(1);
    broadcaster.close();
    expect(broadcaster.size).toBe(0);
  });

  it("skips ticks for a stream whose reader has not taken the last one: a slow client never builds a backlog", async () => {
    const { clock, broadcaster } = setup();
    const reader = broadcaster.open()!.getReader();
    for (let i = 0; i < 20; i++) clock.advance(1000);
    expect(await next(reader)).toBe('data: {"tick":1}\n\n');
    const second = next(reader);
    clock.advance(1000);
    // Not tick 2: the twenty ticks it was too slow for were never queued for it.
    expect(await second).toBe('data: {"tick":22}\n\n');
    await reader.cancel();
  });
});
