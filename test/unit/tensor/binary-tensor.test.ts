import { describe, expect, it } from "vitest";
import { decodeBinaryTensor, encodeBinaryTensor } from "../../../runtime/tensor/mod.ts";
import { expectInvalid } from "./_helpers.ts";

const utf8 = new TextEncoder();

describe("binary tensors", () => {
  it("`encodeBinaryTensor()` writes the §1.6 example ['ab','xyz'] as 13 bytes", () => {
    const bytes = encodeBinaryTensor({ datatype: "BYTES", shape: [2], data: [utf8.encode("ab"), utf8.encode("xyz")] });
    expect(Array.from(bytes)).toEqual([0x02, 0, 0, 0, 0x61, 0x62, 0x03, 0, 0, 0, 0x78, 0x79, 0x7a]);
    expect(decodeBinaryTensor(bytes, { name: "S", datatype: "BYTES", shape: [2] })).toEqual([
      utf8.encode("ab"),
      utf8.encode("xyz"),
    ]);
  });

  it("`encodeBinaryTensor()` writes numbers little-endian", () => {
    expect(Array.from(encodeBinaryTensor({ datatype: "UINT32", shape: [1], data: Uint32Array.of(0x01020304) }))).toEqual([
      4, 3, 2, 1,
    ]);
    expect(Array.from(encodeBinaryTensor({ datatype: "INT64", shape: [1], data: BigInt64Array.of(-2n) }))).toEqual([
      0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    ]);
  });

  it("`decodeBinaryTensor()` returns a view when aligned and an aligned copy when not", () => {
    const buffer = new Uint8Array(12);
    new DataView(buffer.buffer).setFloat32(4, 2.5, true);
    const aligned = decodeBinaryTensor(buffer.subarray(4, 8), { name: "F", datatype: "FP32", shape: [1] }) as Float32Array;
    expect(aligned.buffer).toBe(buffer.buffer);
    expect(aligned[0]).toBe(2.5);

    new DataView(buffer.buffer).setFloat32(5, -7.25, true);
    const copied = decodeBinaryTensor(buffer.subarray(5, 9), { name: "F", datatype: "FP32", shape: [1] }) as Float32Array;
    expect(copied.buffer).not.toBe(buffer.buffer);
    expect(copied[0]).toBe(-7.25);
  });

  it("`decodeBinaryTensor()` handles empty tensors at unaligned offsets", () => {
    const buffer = new Uint8Array(3);
    expect(decodeBinaryTensor(buffer.subarray(1, 1), { name: "E", datatype: "FP64", shape: [0, 4] })).toEqual(new Float64Array(0));
    expect(decodeBinaryTensor(buffer.subarray(1, 1), { name: "E", datatype: "BYTES", shape: [0] })).toEqual([]);
  });

  it("`decodeBinaryTensor()` rejects a size that is not product(shape) × element size, naming the input", () => {
    expectInvalid(
      () => decodeBinaryTensor(new Uint8Array(7), { name: "X", datatype: "INT64", shape: [1] }),
      "input 'X'",
      "expected 8 bytes",
      "got 7",
    );
  });

  it("`decodeBinaryTensor()` rejects BYTES zero-length elements beyond the shape's count", () => {
    expectInvalid(
      () => decodeBinaryTensor(new Uint8Array(12), { name: "S", datatype: "BYTES", shape: [2] }),
      "input 'S'",
      "left after the 2 elements",
    );
  });
});
