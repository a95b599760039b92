import { describe, expect, it } from "vitest";
import { takeBody } from "../../../runtime/call/admission.ts";
import type { DirectBody } from "../../../runtime/call/direct-body.ts";

/** A body whose `take` finds it buffered only from the `availableFrom`-th call; `read` counts its calls. Both stop at the limit. */
function body(bytes: Uint8Array, availableFrom: number): DirectBody & { takes: number; reads: number } {
  const b = {
    signal: new AbortController().signal,
    takes: 0,
    reads: 0,
    take(limit: number) {
      return ++b.takes >= availableFrom && bytes.byteLength <= limit ? bytes : undefined;
    },
    async read(limit: number) {
      b.reads++;
      return bytes.byteLength <= limit ? bytes : undefined;
    },
  };
  return b;
}
const headers = (h: Record<string, string>) => (name: string) => h[name];
const bytes = new TextEncoder().encode("{}");

describe("takeBody", () => {
  it("takes a body that is buffered at once, or one microtask later (Node pushes one sent with its head then), without reading", async () => {
    for (const from of [1, 2]) {
      const b = body(bytes, from);
      expect(await takeBody(headers({}), b, 1024)).toBe(bytes);
      expect([b.takes, b.reads]).toEqual([from, 0]);
    }
  });

  it("reads a body still arriving, a compressed one, and one past the limit (which read refuses)", async () => {
    const later = body(bytes, 3);
    expect(await takeBody(headers({}), later, 1024)).toBe(bytes);
    expect(later.reads).toBe(1);
    const gzip = body(bytes, 1);
    await takeBody(headers({ "content-encoding": "gzip" }), gzip, 1024).catch(() => {});
    expect([gzip.takes, gzip.reads]).toEqual([0, 1]);
    const large = body(bytes, 1);
    await expect(takeBody(headers({}), large, 1)).rejects.toMatchObject({ code: "RESOURCE_EXHAUSTED" });
  });
});
