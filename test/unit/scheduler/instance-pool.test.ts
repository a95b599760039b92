import { describe, expect, it } from "vitest";
import { InstancePool } from "../../../runtime/scheduler/queue/instance-pool.ts";

describe("InstancePool", () => {
  it("takes a free instance out at once, a busy one when it comes back, and never the last", async () => {
    const pool = new InstancePool(["a", "b", "c"], () => {});
    expect(pool.take()).toBe("c");
    expect(pool.take()).toBe("b");
    expect(await pool.remove()).toBe("a"); // the free one
    expect([pool.count, pool.total]).toEqual([2, 2]);

    let removed: string | undefined;
    void pool.remove().then((i) => (removed = i));
    expect([pool.count, pool.total, pool.hasFree]).toEqual([1, 2, false]); // promised away, still held
    await expect(pool.remove()).rejects.toThrow("last instance");

    pool.release("b");
    await Promise.resolve();
    expect(removed).toBe("b");
    expect([pool.count, pool.total, pool.hasFree]).toEqual([1, 1, false]);
    pool.release("c");
    expect(pool.peek()).toBe("c");

    pool.add("d");
    expect([pool.count, pool.total, pool.take(), pool.take()]).toEqual([2, 2, "d", "c"]);
  });
});
