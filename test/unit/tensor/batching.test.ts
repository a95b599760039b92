import { describe, expect, it } from "vitest";
import { batchOf, batchParts, concatBatch, splitBatch } from "../../../runtime/tensor/mod.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";

const rows = (n: number, from: number): Tensor => ({ datatype: "FP32", shape: [n, 2], data: Float32Array.from({ length: n * 2 }, (_, i) => from + i) });

describe("batching", () => {
  it("`concatBatch()` copies the parts into one buffer along dimension 0; `splitBatch()` hands them back as views", () => {
    const batch = concatBatch([rows(1, 0), rows(2, 10)]);
    expect(batch.shape).toEqual([3, 2]);
    expect([...(batch.data as Float32Array)]).toEqual([0, 1, 10, 11, 12, 13]);
    const [a, b] = splitBatch(batch, [1, 2]);
    expect(b!.shape).toEqual([2, 2]);
    expect((b!.data as Float32Array).buffer).toBe((batch.data as Float32Array).buffer);
    expect([...(a!.data as Float32Array)]).toEqual([0, 1]);
  });

  it("`batchOf()` keeps the parts until its data is read, then reads as `concatBatch()` would", () => {
    const parts = [rows(1, 0), rows(2, 10)];
    const batch = batchOf(parts);
    expect(batch.shape).toEqual([3, 2]);
    expect(batchParts(batch)).toEqual(parts.map((p) => p.data));
    expect(batchParts(batch)![1]).toBe(parts[1]!.data); // the requests' own buffers, not copies
    expect(batch.data).toEqual(concatBatch(parts).data);
    expect(batch.data).toBe(batch.data); // assembled once
  });

  it("`batchOf()` of one tensor, or of BYTES, is that tensor or a plain concatenation: no parts", () => {
    const one = rows(2, 0);
    expect(batchOf([one])).toBe(one);
    const bytes = (s: string): Tensor => ({ datatype: "BYTES", shape: [1], data: [new TextEncoder().encode(s)] });
    const joined = batchOf([bytes("a"), bytes("b")]);
    expect(batchParts(joined)).toBeUndefined();
    expect((joined.data as Uint8Array[]).map((b) => new TextDecoder().decode(b))).toEqual(["a", "b"]);
  });
});
