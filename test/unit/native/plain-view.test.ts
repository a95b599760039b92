import { describe, expect, it } from "vitest";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { loadNative } from "../../../native/index.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as (options?: { type: "major"; execution: "sync" }) => void;

describe("native plainView", () => {
  const native = loadNative();

  it("is a plain ArrayBuffer over a Uint8Array's shared memory, offset and all, not a copy", () => {
    expect(native, "native/build/Release/tensorfn_native.node is missing: `npm ci` builds it").toBeDefined();
    const shared = new SharedArrayBuffer(16);
    const bytes = new Uint8Array(shared, 4, 8);
    bytes.set([1, 2, 3, 4, 5, 6, 7, 8]);
    const view = native!.plainView(bytes)!;
    expect(view).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(view)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    new Uint8Array(shared)[4] = 99;
    expect(new Uint8Array(view)[0]).toBe(99);
  });

  it("gives nothing for what it cannot view: an empty array, another element type, a non-array", () => {
    expect(native).toBeDefined();
    const plainView = native!.plainView as (value: unknown) => ArrayBuffer | undefined;
    expect(plainView(new Uint8Array(0))).toBeUndefined();
    expect(plainView(new Int32Array(new SharedArrayBuffer(8)))).toBeUndefined();
    expect(plainView({ byteLength: 4 })).toBeUndefined();
    expect(plainView(undefined)).toBeUndefined();
  });

  it("keeps the memory it views alive after the last other reference to it is gone", async () => {
    expect(native).toBeDefined();
    let bytes: Uint8Array | undefined = new Uint8Array(new SharedArrayBuffer(1 << 20)).fill(7);
    const view = native!.plainView(bytes)!;
    bytes = undefined;
    // A full collection frees a shared buffer nothing holds (1 MB: unmapped, so reading it then would fault).
    gc({ type: "major", execution: "sync" });
    await new Promise((resolve) => setTimeout(resolve, 0));
    gc({ type: "major", execution: "sync" });
    const seen = new Uint8Array(view);
    expect(seen[0]).toBe(7);
    expect(seen[seen.length - 1]).toBe(7);
  });
});
