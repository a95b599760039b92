import { afterEach, describe, expect, it } from "vitest";
import { Buffer } from "node:buffer";
import { closeSync } from "node:fs";
import { LANE_MIN_BYTES, openLaneFile, tensorLane } from "../../../adapters/tensor-lane.ts";

// Both sides of a lane in one process, on a real file in /dev/shm; structuredClone stands in for
// the IPC channel's serializer (the same structured-clone algorithm).
const opened: number[] = [];
afterEach(() => opened.splice(0).forEach((fd) => closeSync(fd)));

function lanes(capacity: number) {
  const fd = openLaneFile(capacity)!;
  expect(fd).toBeDefined();
  opened.push(fd);
  return { server: tensorLane(fd, "server", capacity), process: tensorLane(fd, "process", capacity) };
}

/** Byte-for-byte equality (toEqual compares a large typed array element by element, slowly). */
const same = (a: ArrayBufferView, b: ArrayBufferView) => a.constructor === b.constructor && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const floats = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => i * 0.5 + seed);
const placed = (message: unknown) => JSON.stringify(message, (_, v) => (ArrayBuffer.isView(v) ? `view ${v.byteLength}` : v)).match(/\\u0000lane/g)?.length ?? 0;

describe("the tensor lane", () => {
  it("places large views in the file and gives them back bit for bit, both ways; small ones stay inline", () => {
    const { server, process } = lanes(1 << 20);
    const big = floats(50_000, 1);
    const small = new Int32Array(16).fill(7);
    const message = { id: 1, op: "run", feeds: { x: { datatype: "FP32", shape: [1, 50_000], data: big }, y: { data: small } }, list: [new BigInt64Array(8192).fill(3n)] };
    const packed = server.pack(message);
    expect(placed(packed)).toBe(2); // big and the BigInt64Array; `small` is under LANE_MIN_BYTES
    expect(message.feeds.x.data).toBe(big); // the original is left as it was
    const got = process.unpack(structuredClone(packed)) as typeof message;
    expect(same(got.feeds.x.data, big)).toBe(true);
    expect(got.feeds.y.data).toEqual(small);
    expect(same(got.list[0]!, new BigInt64Array(8192).fill(3n))).toBe(true);
    // And back: a Buffer comes back a Buffer.
    const reply = process.pack({ id: 1, ok: true, outputs: { z: { data: Buffer.alloc(LANE_MIN_BYTES, 9) } } });
    expect(placed(reply)).toBe(1);
    const back = server.unpack(structuredClone(reply)) as { outputs: { z: { data: Buffer } } };
    expect(Buffer.isBuffer(back.outputs.z.data)).toBe(true);
    expect(back.outputs.z.data.equals(Buffer.alloc(LANE_MIN_BYTES, 9))).toBe(true);
  });

  it("reuses its space once read, around the ring, and sends inline what does not fit while the ring is full", () => {
    const { server, process } = lanes(1 << 20); // 1 MiB: three 300 KB tensors fit, a fourth does not
    for (let round = 0; round < 20; round++) {
      // Both ways at once: a ring that ran past its end would write into the other's.
      const out = [0, 1, 2, 3].map((k) => ({ data: floats(75_000, round * 10 + k) }));
      const back = [0, 1, 2].map((k) => ({ data: floats(60_000, -round * 10 - k) })); // another size: the rings wrap at other times
      const packedOut = out.map((m) => server.pack(m));
      const packedBack = back.map((m) => process.pack(m));
      expect(packedOut.map(placed)).toEqual([1, 1, 1, 0]); // the fourth inline: nothing read yet
      expect(packedBack.map(placed)).toEqual([1, 1, 1]);
      packedOut.forEach((m, k) => expect(same((process.unpack(structuredClone(m)) as { data: Float32Array }).data, out[k]!.data), `round ${round}, out ${k}`).toBe(true));
      packedBack.forEach((m, k) => expect(same((server.unpack(structuredClone(m)) as { data: Float32Array }).data, back[k]!.data), `round ${round}, back ${k}`).toBe(true));
    }
    // Larger than the ring: inline.
    expect(placed(server.pack({ data: floats(300_000, 0) }))).toBe(0);
  });
});

describe("a place from a process gone wrong", () => {
  it("is refused, naming it, before anything is allocated or read", () => {
    const { server } = lanes(1 << 20);
    const mark = "\u0000lane";
    for (const [place, says] of [
      [{ [mark]: 0, bytes: 2 ** 40, type: "Float32Array" }, /\(0, 1099511627776 bytes, Float32Array\)/],
      [{ [mark]: -4, bytes: 8, type: "Float32Array" }, /\(-4, 8 bytes/],
      [{ [mark]: (1 << 20) - 4, bytes: 8, type: "Float32Array" }, /past|malformed/], // runs past its ring
      [{ [mark]: 0, bytes: 6, type: "Float32Array" }, /malformed/], // not whole elements
      [{ [mark]: 0, bytes: 8, type: "Function" }, /Function\)/],
      [{ [mark]: "0", bytes: 8, type: "Uint8Array" }, /malformed/],
    ] as const) {
      expect(() => server.unpack({ id: 1, ok: true, outputs: { z: { data: place } } }), JSON.stringify(place)).toThrow(says);
    }
  });
});
