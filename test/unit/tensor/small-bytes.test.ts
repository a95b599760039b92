import { describe, expect, it } from "vitest";
import { SMALL_BYTES_MAX, smallBytes, smallStorage } from "../../../runtime/tensor/mod.ts";
import { postable, transferables } from "../../../runtime/backends/_worker-protocol.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";

// Small per-request buffers share slabs (runtime/tensor/small-bytes.ts): what that must never change
// for the code that uses them is below.
describe("smallBytes / smallStorage", () => {
  it("hands out zeroed, 8-byte aligned, non-overlapping views of shared memory", () => {
    const views = [3, 1, 17, 8, 0, 250].map((n) => smallBytes(n));
    for (const v of views) {
      expect(v.byteOffset % 8).toBe(0);
      expect(v.every((b) => b === 0)).toBe(true);
      v.fill(0xff);
    }
    // Filling each one left the others' bytes to them: no two views share a byte.
    const fresh = smallBytes(64);
    expect(fresh.every((b) => b === 0)).toBe(true);
    // One slab behind them (this file's first allocations), far larger than any of them.
    expect(views.every((v) => v.buffer === views[0]!.buffer)).toBe(true);
    expect(views[0]!.buffer.byteLength).toBeGreaterThan(SMALL_BYTES_MAX);
  });

  it("gives typed storage a view of the right length at any element size", () => {
    smallBytes(3); // leaves the slab unaligned for what follows
    const f64 = smallStorage(Float64Array, 5);
    const i32 = smallStorage(Int32Array, 7);
    expect([f64.length, f64.byteOffset % 8, i32.length, i32.byteOffset % 8]).toEqual([5, 0, 7, 0]);
    f64.set([1.5, 2.5, 3.5, 4.5, 5.5]);
    expect([...f64]).toEqual([1.5, 2.5, 3.5, 4.5, 5.5]);
  });

  it("gives larger requests a buffer of their own", () => {
    const big = smallBytes(SMALL_BYTES_MAX + 1);
    expect([big.byteOffset, big.buffer.byteLength]).toEqual([0, SMALL_BYTES_MAX + 1]);
    const storage = smallStorage(Float32Array, SMALL_BYTES_MAX);
    expect(storage.buffer.byteLength).toBe(SMALL_BYTES_MAX * 4);
  });

  it("starts a new slab when one is full, without touching views already handed out", () => {
    const first = smallBytes(SMALL_BYTES_MAX);
    first.fill(7);
    const later = Array.from({ length: 40 }, () => smallBytes(SMALL_BYTES_MAX));
    expect(first.every((b) => b === 7)).toBe(true);
    expect(later.every((v) => v.every((b) => b === 0))).toBe(true);
    expect(new Set(later.map((v) => v.buffer)).size).toBeGreaterThan(1);
  });

  it("is never moved to a worker: a slab view is not transferable, and is copied before it is posted", () => {
    const data = smallStorage(Int32Array, 16).fill(3);
    const feeds: Record<string, Tensor> = { x: { datatype: "INT32", shape: [1, 16], data } };
    expect(transferables(feeds)).toEqual([]);
    const posted = postable(feeds);
    expect(posted.x!.data).not.toBe(data);
    expect([...(posted.x!.data as Int32Array)]).toEqual([...data]);
    // The copy owns its buffer, so it moves by transfer: the slab is never cloned along with it.
    expect(transferables(posted)).toEqual([(posted.x!.data as Int32Array).buffer]);
    // A tensor that owns its buffer already is posted as it is.
    const own = { y: { datatype: "INT32", shape: [2], data: new Int32Array(2) } as Tensor };
    expect(postable(own)).toBe(own);
  });
});
