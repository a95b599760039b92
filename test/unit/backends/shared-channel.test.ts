import { describe, expect, it } from "vitest";
import { arenaBytesFor, arenaSizeFor, CONTROL_BYTES, FETCH_BITS, fetchedNames, fetchMask, INITIAL_ARENA_BYTES, readTensors, writeTensors } from "../../../runtime/backends/_shared-channel.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";
import { batchOf } from "../../../runtime/tensor/mod.ts";

const names = ["a", "b", "c"];

describe("shared channel layout", () => {
  it("`writeTensors()` then `readTensors()` round-trips mixed datatypes at 8-byte-aligned offsets", () => {
    const tensors: Record<string, Tensor> = {
      b: { datatype: "UINT8", shape: [1, 3], data: Uint8Array.of(1, 2, 3) },
      c: { datatype: "INT64", shape: [2], data: BigInt64Array.of(-1n, 2n ** 62n) },
      a: { datatype: "FP32", shape: [], data: Float32Array.of(0.5) },
    };
    expect(arenaBytesFor(names, tensors)).toBe(8 + 16 + 8);
    const control = new Int32Array(new SharedArrayBuffer(CONTROL_BYTES));
    const arena = new SharedArrayBuffer(INITIAL_ARENA_BYTES);
    writeTensors(control, new Uint8Array(arena), names, tensors);
    const views = readTensors(control, arena, names, false);
    const copies = readTensors(control, arena, names, true);
    expect(copies).toEqual(tensors);
    expect((views.c!.data as BigInt64Array).buffer).toBe(arena);
    expect((copies.c!.data as BigInt64Array).buffer).toBeInstanceOf(ArrayBuffer);
  });

  it("`writeTensors()` writes a batch's parts one after another, as the assembled batch would read", () => {
    const part = (values: number[]): Tensor => ({ datatype: "INT32", shape: [values.length / 2, 2], data: Int32Array.from(values) });
    const batch = batchOf([part([1, 2]), part([3, 4, 5, 6])]);
    expect(arenaBytesFor(names, { a: batch })).toBe(24);
    const control = new Int32Array(new SharedArrayBuffer(CONTROL_BYTES));
    const arena = new SharedArrayBuffer(INITIAL_ARENA_BYTES);
    writeTensors(control, new Uint8Array(arena), names, { a: batch, b: part([7, 8]) });
    const read = readTensors(control, arena, names, true);
    expect(read.a).toEqual({ datatype: "INT32", shape: [3, 2], data: Int32Array.of(1, 2, 3, 4, 5, 6) });
    expect([...(read.b!.data as Int32Array)]).toEqual([7, 8]);
  });

  it("`arenaBytesFor()` is -1 for what the channel cannot carry: BYTES, names outside the signature", () => {
    expect(arenaBytesFor(names, { a: { datatype: "BYTES", shape: [1], data: [Uint8Array.of(65)] } })).toBe(-1);
    expect(arenaBytesFor(names, { z: { datatype: "FP32", shape: [1], data: Float32Array.of(1) } })).toBe(-1);
  });

  it("`fetchMask()` names the outputs a run fetches, and `fetchedNames()` reads them back; 0 is all, -1 what a mask cannot say", () => {
    expect(fetchMask(names, undefined)).toBe(0);
    expect(fetchedNames(names, 0)).toBeUndefined();
    expect(fetchMask(names, ["c", "a"])).toBe(0b101);
    expect(fetchedNames(names, 0b101)).toEqual(["a", "c"]);
    expect(fetchMask(names, ["z"])).toBe(-1);
    const many = Array.from({ length: FETCH_BITS + 2 }, (_, i) => `o${i}`);
    expect(fetchMask(many, [`o${FETCH_BITS - 1}`])).toBe(1 << (FETCH_BITS - 1));
    expect(fetchedNames(many, 1 << (FETCH_BITS - 1))).toEqual([`o${FETCH_BITS - 1}`]);
    expect(fetchMask(many, [`o${FETCH_BITS}`])).toBe(-1);
  });

  it("`arenaSizeFor()` grows in powers of two from the initial size", () => {
    expect(arenaSizeFor(1)).toBe(INITIAL_ARENA_BYTES);
    expect(arenaSizeFor(INITIAL_ARENA_BYTES + 1)).toBe(2 * INITIAL_ARENA_BYTES);
  });
});
