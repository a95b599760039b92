import { describe, expect, it } from "vitest";
import { SelfHealingSession } from "../../../runtime/lifecycle/self-healing-session.ts";
import type { Session } from "../../../runtime/backends/backend.ts";

const signature = { inputs: [], outputs: [] } as unknown as Session["signature"];

function session(extra: Partial<Session> = {}): Session {
  return { signature, provider: "cpu", run: async () => ({}), release: async () => {}, ...extra };
}

const options = { create: async () => session(), onLost: () => {}, log: { warn() {}, error() {} } };

describe("SelfHealingSession: what the scheduler reads of the instance", () => {
  it("passes on `computeTurn` of a session that computes on a later turn of the loop, and none otherwise", () => {
    const turns: (() => void)[] = [];
    const inline = new SelfHealingSession(session({ computeTurn: (fn) => void turns.push(fn) }), options);
    let called = false;
    inline.computeTurn!(() => (called = true));
    turns.forEach((fn) => fn());
    expect(called).toBe(true);
    expect(new SelfHealingSession(session(), options).computeTurn).toBeUndefined();
  });
});
