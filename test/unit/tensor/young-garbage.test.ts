import { describe, expect, it } from "vitest";
import { GCProfiler, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { batchOf } from "../../../runtime/tensor/mod.ts";
import { Admission, CallOptions } from "../../../runtime/call/call-options.ts";
import { requestBody } from "../../../runtime/call/admission.ts";
import type { DirectBody } from "../../../runtime/call/direct-body.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";

// What the hot path builds per request must die young. V8 (Node 20) allocates an object literal
// that has an accessor (`{ get signal() { … } }`) in the old generation, so whatever its getter
// reaches survives every young-generation collection (scavenge) and is only freed by a full one:
// every request's body, tensors and connection objects were promoted (mlp at 32 JSON clients,
// `bash bench/studies/gc-window.sh <checkout> mlp 32 json`: 705 KB per scavenge and 3.6 ms pauses
// before these classes, 3 KB and 0.9 ms after).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as (options?: { type: "minor" | "major"; execution?: "sync" }) => void;

/**
 * Bytes the young-generation collections moved to old space while `count` objects were made with
 * `make`, each reaching ~1 KB of fresh heap data, and two scavenges after: all of it (4 MB) when
 * something old points at them, a little of the test's own otherwise. Read from each scavenge's
 * old space before and after it (v8.GCProfiler), not from old space across the whole loop: that
 * moved ±1.5 MB with sweeping finishing on helper threads, and the test failed 3 runs in 8 on it.
 */
function promotedBy(make: (payload: number[]) => unknown, count = 4000): number {
  gc({ type: "major", execution: "sync" });
  const profiler = new GCProfiler();
  profiler.start();
  let sink = 0;
  for (let i = 0; i < count; i++) sink += make(new Array<number>(128).fill(i + 0.5)) ? 1 : 0;
  gc({ type: "minor", execution: "sync" });
  gc({ type: "minor", execution: "sync" });
  const collections = profiler.stop()?.statistics ?? [];
  expect(sink).toBe(count);
  const oldUsed = (spaces: readonly { spaceName: string; spaceUsedSize: number }[]) => spaces.find((s) => s.spaceName === "old_space")!.spaceUsedSize;
  let promoted = 0;
  for (const c of collections) if (c.gcType === "Scavenge") promoted += oldUsed(c.afterGC.heapSpaceStatistics) - oldUsed(c.beforeGC.heapSpaceStatistics);
  expect(collections.some((c) => c.gcType === "Scavenge")).toBe(true);
  return promoted;
}

const signal = new AbortController().signal;
const body = (payload: number[]): DirectBody => ({ signal, read: () => Promise.resolve(new Uint8Array(payload)) });

describe("per-request objects die young", () => {
  it("the mechanism: an object literal whose getter reaches 1 KB each promotes it all", () => {
    const literal = (payload: number[]) => ({
      get data() {
        return payload;
      },
    });
    expect(promotedBy(literal)).toBeGreaterThan(3 * 1024 * 1024);
    expect(promotedBy((payload) => ({ data: payload }))).toBeLessThan(1024 * 1024);
  });

  it("a call's options and admission, a web request's body, and a batch of tensors do not", () => {
    const header = () => undefined;
    expect(promotedBy((payload) => new CallOptions(body(payload)))).toBeLessThan(1024 * 1024);
    expect(promotedBy((payload) => new Admission(header, body(payload)))).toBeLessThan(1024 * 1024);
    // A stand-in for a web Request (a real one brings undici's own long-lived bookkeeping).
    expect(promotedBy((payload) => requestBody({ signal, body: null, payload } as unknown as Request))).toBeLessThan(1024 * 1024);
    const part = (payload: number[]): Tensor => ({ datatype: "FP64", shape: [1, 128], data: payload as unknown as Float64Array });
    expect(promotedBy((payload) => batchOf([part(payload), part(payload)]))).toBeLessThan(1024 * 1024);
  });
});
