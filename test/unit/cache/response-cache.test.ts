import { describe, expect, it } from "vitest";
import { createNodePlatform } from "../../../adapters/node/platform.ts";
import { ResponseCache } from "../../../runtime/cache/mod.ts";
import type { Tensor } from "../../../runtime/core/mod.ts";

const fp32 = (values: number[], shape = [1, values.length]): Tensor => ({ datatype: "FP32", shape, data: Float32Array.from(values) });
const bytes = (...elements: string[]): Tensor => ({ datatype: "BYTES", shape: [1, elements.length], data: elements.map((e) => new TextEncoder().encode(e)) });

/** Node's native SHA-256, as the Node platform gives it. */
const sha256Hex = createNodePlatform().sha256Hex!;

describe.each([
  ["the platform's native SHA-256", new ResponseCache(1 << 20, { sha256Hex })],
  ["WebCrypto's digest (no native one)", new ResponseCache(1 << 20)],
])("ResponseCache keys with %s", (_how, cache) => {

  it("`key()` is the same for the same request and differs when any byte, shape, datatype, name, scope or answer-changing parameter does", async () => {
    const key = (feeds: Record<string, Tensor>, parameters = {}, scope = "f\u00011\u00011") => cache.key(scope, feeds, parameters);
    const base = await key({ x: fp32([1, 2, 3, 4]) });
    expect(await key({ x: fp32([1, 2, 3, 4]) })).toBe(base);
    const others = await Promise.all([
      key({ x: fp32([1, 2, 3, 5]) }),
      key({ x: fp32([1, 2, 3, 4], [2, 2]) }),
      key({ x: { datatype: "INT32", shape: [1, 4], data: new Int32Array(new Float32Array([1, 2, 3, 4]).buffer) } }),
      key({ y: fp32([1, 2, 3, 4]) }),
      key({ x: fp32([1, 2, 3, 4]) }, { temperature: 0.5 }),
      key({ x: fp32([1, 2, 3, 4]) }, {}, "f\u00011\u00012"),
    ]);
    expect(new Set([base, ...others]).size).toBe(7);
    // How the answer travels or when it runs does not change a model's answer.
    expect(await key({ x: fp32([1, 2, 3, 4]) }, { binary_data_output: true, priority: 1, timeout: 100 })).toBe(base);
  });

  it("`key()` with everyParameter (an ensemble, a handler: code that can read them) tells priority, timeout and binary_data_output apart", async () => {
    const key = (parameters: Record<string, unknown>) => cache.key("s", { x: fp32([1]) }, parameters, { everyParameter: true });
    const keys = await Promise.all([key({}), key({ priority: 0 }), key({ priority: 1 }), key({ timeout: 100 }), key({ binary_data_output: true })]);
    expect(new Set(keys).size).toBe(5);
  });

  it("`key()` keeps BYTES element boundaries: ['ab', 'c'] and ['a', 'bc'] differ", async () => {
    expect(await cache.key("s", { t: bytes("ab", "c") })).not.toBe(await cache.key("s", { t: bytes("a", "bc") }));
  });

  it("`key()` hashes a view where it lies: a slice of a bigger buffer keys as the same values on their own", async () => {
    const big = new Float32Array([9, 1, 2, 9]);
    const view: Tensor = { datatype: "FP32", shape: [1, 2], data: big.subarray(1, 3) };
    expect(await cache.key("s", { x: view })).toBe(await cache.key("s", { x: fp32([1, 2]) }));
  });

});

describe("ResponseCache", () => {
  it("the Node platform's digest is SHA-256 in hex, in one chunk or many", () => {
    const abc = new TextEncoder().encode("abc");
    const known = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; // FIPS 180-2's example
    expect([sha256Hex([abc]), sha256Hex([abc.subarray(0, 1), abc.subarray(1)]), sha256Hex([new Uint8Array(), abc])]).toEqual([known, known, known]);
  });

  it("`replyKey()` names one scope, framing and body: any byte, the framing or the scope changes it", () => {
    const c = new ResponseCache(1 << 20, { sha256Hex });
    const body = (...b: number[]) => Uint8Array.from(b);
    const base = c.replyKey("f\u00011\u00011", "2", body(1, 2, 3));
    expect(c.replyKey("f\u00011\u00011", "2", body(1, 2, 3))).toBe(base);
    const others = [
      c.replyKey("f\u00011\u00011", "2", body(1, 2, 4)),
      c.replyKey("f\u00011\u00011", "2", body(1, 2, 3, 0)),
      c.replyKey("f\u00011\u00011", "3", body(1, 2, 3)),
      c.replyKey("f\u00011\u00011", "", body(1, 2, 3)),
      c.replyKey("f\u00011\u00012", "2", body(1, 2, 3)),
    ];
    expect(new Set([base, ...others]).size).toBe(6);
    // Framing a key cannot carry (a refused header, or one long enough to make a long key): no key, no caching.
    expect([c.replyKey("s", " 2", body(1)), c.replyKey("s", "2x", body(1)), c.replyKey("s", "9".repeat(16), body(1))]).toEqual([undefined, undefined, undefined]);
    // Without a native digest there is no reply cache (WebCrypto's would cost more than it saves).
    expect(new ResponseCache(1 << 20).replyKey("s", "", body(1))).toBeUndefined();
  });

  it("keys alike with either digest: both are SHA-256 over the same framing", async () => {
    const feeds = { x: fp32([1, 2]), t: bytes("a", "bc") };
    expect(await new ResponseCache(1024).key("s", feeds, { p: 1 })).toBe(new ResponseCache(1024, { sha256Hex }).key("s", feeds, { p: 1 }));
  });

  it("`set()` keeps a copy: changing the answer's buffer afterwards (a batch buffer reused) does not change the cached one", () => {
    const c = new ResponseCache(1 << 20);
    const out = fp32([1, 2]);
    c.set("s\u0000k", { y: out });
    (out.data as Float32Array)[0] = 99;
    expect([...(c.get("s\u0000k")!.y!.data as Float32Array)]).toEqual([1, 2]);
  });

  it("`set()` packs BYTES outputs and charges what they hold: 2 M empty strings cost ~8 MB, not an object each", () => {
    const c = new ResponseCache(64 << 20);
    const elements = new Array<Uint8Array>(2_000_000).fill(new Uint8Array(0));
    elements[1] = new TextEncoder().encode("xyz");
    c.set("s\u0000k", { y: { datatype: "BYTES", shape: [elements.length], data: elements } });
    const { bytes } = c.figures;
    expect(bytes).toBeGreaterThanOrEqual(8_000_003);
    expect(bytes).toBeLessThan(8_001_000);
    const hit = c.get("s\u0000k")!.y!;
    const data = hit.data as Uint8Array[];
    expect(hit.shape).toEqual([2_000_000]);
    expect(data).toHaveLength(2_000_000);
    expect(new TextDecoder().decode(data[1])).toBe("xyz");
    expect([data[0]!.byteLength, data[1_999_999]!.byteLength]).toEqual([0, 0]);
  });

  it("charges every entry a fixed overhead: a cache of 1 MB holds at most ~4000 tiny answers", () => {
    const c = new ResponseCache(1 << 20);
    for (let i = 0; i < 10_000; i++) c.set(`s\u0000${i}`, { y: fp32([i]) });
    expect(c.figures.entries).toBeLessThan(4100);
    expect(c.figures.bytes).toBeLessThanOrEqual(1 << 20);
  });

  it("evicts the least recently used answers by bytes, never keeps one larger than itself, and `invalidate()` drops a scope", () => {
    const c = new ResponseCache(3 * (400 + 256 + 128 + 8));
    const answer = () => ({ y: fp32(Array(100).fill(1)) }); // 400 bytes
    for (const k of ["a\u0000k1", "a\u0000k2", "b\u0000k3"]) c.set(k, answer());
    c.get("a\u0000k1"); // k2 is now the least recently used
    c.set("b\u0000k4", answer());
    expect(["a\u0000k1", "a\u0000k2", "b\u0000k3", "b\u0000k4"].map((k) => c.get(k) !== undefined)).toEqual([true, false, true, true]);
    expect(c.figures).toMatchObject({ entries: 3, evictions: 1 });
    c.set("a\u0000huge", { y: fp32(Array(1000).fill(1)) });
    expect(c.get("a\u0000huge")).toBeUndefined();
    c.invalidate("b\u0000");
    expect(c.figures.entries).toBe(1);
    expect(c.get("a\u0000k1")).toBeDefined();
  });
});
