import { describe, expect, it } from "vitest";
import { planTransition } from "../../../runtime/lifecycle/deployment-state.ts";
import type { VersionView } from "../../../runtime/lifecycle/deployment-state.ts";

const view = (over: Partial<VersionView> = {}): VersionView => ({ state: "READY", loaded: true, park: "host", inflight: 0, liveSequences: 0, idleMs: 0, idleTimeoutMs: 1000, ...over });

describe("planTransition(): what a version does, decided from what it is", () => {
  it("a request is served by a READY version, wakes a PARKED one from its kept bytes, loads any other from its file", () => {
    expect(planTransition(view(), { on: "request" })).toEqual({ do: "serve" });
    expect(planTransition(view({ state: "PARKED", loaded: false }), { on: "request" })).toEqual({ do: "load", from: "parked" });
    for (const state of ["UNAVAILABLE", "FAILED", "LOADING", "UNLOADING"] as const) expect(planTransition(view({ state, loaded: false }), { on: "request" })).toEqual({ do: "load", from: "file" });
    // READY without a deployment (a reload's window) is not served from nothing.
    expect(planTransition(view({ loaded: false }), { on: "request" })).toEqual({ do: "load", from: "file" });
  });

  it("a park releases a READY version's sessions, unloads where the function keeps nothing (park: none), and leaves any other as it is", () => {
    expect(planTransition(view(), { on: "park", why: "budget" })).toEqual({ do: "park", why: "budget" });
    expect(planTransition(view({ park: "none" }), { on: "park", why: "api" })).toEqual({ do: "unload", why: "api" });
    expect(planTransition(view({ state: "PARKED", loaded: false }), { on: "park", why: "api" })).toEqual({ do: "nothing" });
    expect(planTransition(view({ state: "LOADING", loaded: false }), { on: "park", why: "idle" })).toEqual({ do: "nothing" });
  });

  it("the idle timer waits out the rest of the timeout, a whole one while busy or holding sequences, then parks (or unloads with park: none)", () => {
    expect(planTransition(view({ idleMs: 300 }), { on: "idle-timer" })).toEqual({ do: "wait", ms: 700 });
    expect(planTransition(view({ inflight: 2, idleMs: 5000 }), { on: "idle-timer" })).toEqual({ do: "wait", ms: 1000 });
    expect(planTransition(view({ liveSequences: 1, idleMs: 5000 }), { on: "idle-timer" })).toEqual({ do: "wait", ms: 1000 });
    expect(planTransition(view({ idleMs: 1000 }), { on: "idle-timer" })).toEqual({ do: "park", why: "idle" });
    expect(planTransition(view({ idleMs: 1000, park: "none" }), { on: "idle-timer" })).toEqual({ do: "unload", why: "idle" });
    expect(planTransition(view({ idleMs: 1000, idleTimeoutMs: 0 }), { on: "idle-timer" })).toEqual({ do: "nothing" });
    expect(planTransition(view({ state: "PARKED", loaded: false, idleMs: 1000 }), { on: "idle-timer" })).toEqual({ do: "nothing" });
  });
});
