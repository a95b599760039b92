import { describe, expect, it } from "vitest";
import { parseByteSize, planRoom } from "../../../runtime/lifecycle/memory-budget.ts";
import type { RoomCandidate } from "../../../runtime/lifecycle/memory-budget.ts";

const ready = (key: string, lastUsed: number, session: number, model: number): RoomCandidate => ({
  key,
  state: "READY",
  lastUsed,
  parkFrees: { host: session, device: 0 },
  evictFrees: { host: session + model, device: 0 },
});
const parked = (key: string, lastUsed: number, model: number): RoomCandidate => ({
  key,
  state: "PARKED",
  lastUsed,
  parkFrees: { host: 0, device: 0 },
  evictFrees: { host: model, device: 0 },
});

describe("planRoom()", () => {
  it("plans nothing when the load fits", () => {
    expect(planRoom({ host: 10, device: 0 }, { host: 50, device: 0 }, { host: 100 }, [])).toEqual({ park: [], evict: [] });
  });

  it("parks the least recently used idle deployment first", () => {
    const plan = planRoom({ host: 40, device: 0 }, { host: 80, device: 0 }, { host: 100 }, [ready("b", 2, 30, 10), ready("a", 1, 30, 10)]);
    expect(plan).toEqual({ park: ["a"], evict: [] });
  });

  it("evicts parked deployments, oldest first, when parking is not enough", () => {
    const plan = planRoom({ host: 50, device: 0 }, { host: 90, device: 0 }, { host: 100 }, [parked("p", 5, 30), ready("r", 1, 10, 20)]);
    expect(plan).toEqual({ park: ["r"], evict: ["r", "p"] });
  });

  it("returns undefined when nothing can make room", () => {
    expect(planRoom({ host: 500, device: 0 }, { host: 90, device: 0 }, { host: 100 }, [ready("r", 1, 10, 20)])).toBeUndefined();
  });

  it("checks the device budget as well as the host one", () => {
    const gpu: RoomCandidate = { key: "g", state: "READY", lastUsed: 1, parkFrees: { host: 0, device: 60 }, evictFrees: { host: 10, device: 60 } };
    expect(planRoom({ host: 0, device: 50 }, { host: 10, device: 60 }, { device: 100 }, [gpu])).toEqual({ park: ["g"], evict: [] });
  });
});

describe("parseByteSize()", () => {
  it("reads plain bytes and k/M/G suffixes", () => {
    expect(parseByteSize("512")).toBe(512);
    expect(parseByteSize("4k")).toBe(4096);
    expect(parseByteSize("1.5G")).toBe(1.5 * 1024 ** 3);
    expect(parseByteSize("200MiB")).toBe(200 * 1024 ** 2);
    expect(parseByteSize("lots")).toBeUndefined();
  });
});
