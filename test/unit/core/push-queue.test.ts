import { describe, expect, it } from "vitest";
import { PushQueue } from "../../../runtime/core/mod.ts";

describe("PushQueue", () => {
  it("hands its reader every item in order, waiting while it is empty, and ends after what was pushed", async () => {
    const queue = new PushQueue<number>();
    const read = (async () => {
      const seen: number[] = [];
      for await (const item of queue.read()) seen.push(item);
      return seen;
    })();
    queue.push(1);
    await new Promise((r) => setTimeout(r, 5));
    queue.push(2);
    queue.push(3);
    queue.end();
    queue.push(4); // after the end: dropped
    expect(await read).toEqual([1, 2, 3]);
  });

  it("throws the end's error once the items before it are read; only the first end counts", async () => {
    const queue = new PushQueue<string>();
    queue.push("a");
    queue.end(new Error("gone"));
    queue.end(new Error("later"));
    const seen: string[] = [];
    await expect((async () => {
      for await (const item of queue.read()) seen.push(item);
    })()).rejects.toThrow("gone");
    expect(seen).toEqual(["a"]);
    expect(queue.length).toBe(0);
  });
});
