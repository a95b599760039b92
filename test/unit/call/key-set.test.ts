import { describe, expect, it } from "vitest";
import { KeySet, parseKeyFile, timingSafeEqual } from "../../../runtime/call/key-set.ts";

/** A byte array that counts how many of its bytes are read. */
function counted(bytes: number[]): { array: Uint8Array; reads: () => number } {
  let reads = 0;
  const target = new Uint8Array(bytes);
  const array = new Proxy(target, {
    get(t, p) {
      if (typeof p === "string" && /^[0-9]+$/.test(p)) reads++;
      const v = Reflect.get(t, p, t);
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
  return { array, reads: () => reads };
}

describe("timingSafeEqual()", () => {
  it("tells equal from unequal arrays, and arrays of different lengths apart", () => {
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2]))).toBe(false);
    expect(timingSafeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });

  it("reads every byte even when the first one differs (no early exit)", () => {
    const a = counted(new Array(32).fill(7));
    const b = new Uint8Array(32).fill(7);
    b[0] = 8;
    expect(timingSafeEqual(a.array, b)).toBe(false);
    expect(a.reads()).toBe(32);
  });
});

describe("KeySet", () => {
  it("has() accepts exactly the configured keys", async () => {
    const keys = await KeySet.create(["alpha-key", "beta-key"]);
    expect(keys.size).toBe(2);
    expect(await keys.has("alpha-key")).toBe(true);
    expect(await keys.has("beta-key")).toBe(true);
    expect(await keys.has("alpha-ke")).toBe(false);
    expect(await keys.has("")).toBe(false);
    expect(await (await KeySet.create([])).has("anything")).toBe(false);
  });

  it("keeps no key in a form that prints", async () => {
    const keys = await KeySet.create(["super-secret-value"]);
    expect(JSON.stringify(keys)).not.toContain("super-secret-value");
    expect(String(keys)).not.toContain("super-secret-value");
  });
});

describe("parseKeyFile()", () => {
  it("reads one key per line, skipping blank lines, comments and CRLF", () => {
    expect(parseKeyFile("# admins\nkey-one\r\n\n  key-two  \n", "keys.txt")).toEqual(["key-one", "key-two"]);
  });

  it("names the file and line of a bad key without printing it", () => {
    expect(() => parseKeyFile("good-key\nbad key with spaces\n", "keys.txt")).toThrow(/^keys\.txt:2: /);
    try {
      parseKeyFile("bad key with spaces", "keys.txt");
    } catch (e) {
      expect((e as Error).message).not.toContain("bad key");
    }
    expect(() => parseKeyFile("# nothing\n\n", "keys.txt")).toThrow(/no keys/);
  });
});
