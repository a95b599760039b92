import { describe, expect, it } from "vitest";
import type { DataType } from "../../../runtime/core/tensor.ts";
import {
  allocate,
  byteSize,
  DATA_TYPES,
  fromConfigType,
  fromOrtType,
  isDataType,
  storageFor,
  tensorByteLength,
  toConfigType,
  toOrtType,
} from "../../../runtime/tensor/mod.ts";

describe("datatypes", () => {
  it("`DATA_TYPES` lists all 14 wire datatypes", () => {
    expect([...DATA_TYPES].sort()).toEqual(
      ["BOOL", "BYTES", "BF16", "FP16", "FP32", "FP64", "INT16", "INT32", "INT64", "INT8", "UINT16", "UINT32", "UINT64", "UINT8"].sort(),
    );
  });

  it("`isDataType()` accepts wire names only, case-sensitively", () => {
    expect(isDataType("FP32")).toBe(true);
    expect(isDataType("BYTES")).toBe(true);
    expect(isDataType("fp32")).toBe(false);
    expect(isDataType("STRING")).toBe(false);
    expect(isDataType("toString")).toBe(false);
    expect(isDataType(3)).toBe(false);
  });

  it("`fromConfigType()` and `toConfigType()` map BYTES to TYPE_STRING and back", () => {
    expect(fromConfigType("TYPE_FP32")).toBe("FP32");
    expect(fromConfigType("TYPE_STRING")).toBe("BYTES");
    expect(fromConfigType("TYPE_BYTES")).toBeUndefined();
    expect(toConfigType("BYTES")).toBe("TYPE_STRING");
    for (const dt of DATA_TYPES) expect(fromConfigType(toConfigType(dt))).toBe(dt);
  });

  it("`fromOrtType()` and `toOrtType()` round-trip every type but BF16", () => {
    expect(fromOrtType("float32")).toBe("FP32");
    expect(fromOrtType("bool")).toBe("BOOL");
    expect(fromOrtType("string")).toBe("BYTES");
    expect(fromOrtType("int4")).toBeUndefined();
    expect(toOrtType("BF16")).toBeUndefined();
    for (const dt of DATA_TYPES) {
      const ort = toOrtType(dt);
      if (ort !== undefined) expect(fromOrtType(ort)).toBe(dt);
    }
  });

  it("`byteSize()` gives the element size, 0 for BYTES", () => {
    const sizes: Record<DataType, number> = {
      BOOL: 1, UINT8: 1, UINT16: 2, UINT32: 4, UINT64: 8, INT8: 1, INT16: 2, INT32: 4, INT64: 8,
      FP16: 2, FP32: 4, FP64: 8, BF16: 2, BYTES: 0,
    };
    for (const dt of DATA_TYPES) expect(byteSize(dt)).toBe(sizes[dt]);
  });

  it("`allocate()` uses the documented storage for each type", () => {
    expect(allocate("INT64", 2)).toBeInstanceOf(BigInt64Array);
    expect(allocate("UINT64", 2)).toBeInstanceOf(BigUint64Array);
    expect(allocate("BOOL", 2)).toBeInstanceOf(Uint8Array);
    expect(allocate("FP16", 2)).toBeInstanceOf(Uint16Array);
    expect(allocate("BF16", 2)).toBeInstanceOf(Uint16Array);
    expect(allocate("FP32", 3)).toEqual(new Float32Array(3));
    expect(allocate("BYTES", 2)).toEqual([new Uint8Array(0), new Uint8Array(0)]);
    for (const dt of DATA_TYPES) {
      const data = allocate(dt, 5);
      expect(data.length).toBe(5);
      if (dt !== "BYTES") expect((data as Uint8Array).BYTES_PER_ELEMENT).toBe(byteSize(dt));
    }
    expect(storageFor("BYTES")).toBeUndefined();
  });

  it("`tensorByteLength()` counts a 4-byte prefix per BYTES element", () => {
    const enc = new TextEncoder();
    expect(tensorByteLength({ datatype: "BYTES", shape: [2], data: [enc.encode("ab"), enc.encode("xyz")] })).toBe(13);
    expect(tensorByteLength({ datatype: "FP32", shape: [3, 2], data: new Float32Array(6) })).toBe(24);
    expect(tensorByteLength({ datatype: "BOOL", shape: [3], data: new Uint8Array(3) })).toBe(3);
  });
});
