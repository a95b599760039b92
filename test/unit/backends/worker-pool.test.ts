import { describe, expect, it } from "vitest";
import type { WorkerHandle } from "../../../runtime/core/mod.ts";
import { WorkerPool } from "../../../runtime/backends/_worker-pool.ts";

/** A worker whose replies wait until the test lets them go: it has "booted" once it answers. */
function heldWorkers() {
  const started: { handle: WorkerHandle; answer(): void }[] = [];
  const startWorker = (): WorkerHandle => {
    let onMessage: (message: unknown) => void = () => {};
    const inbox: { id: number }[] = [];
    const handle: WorkerHandle = {
      postMessage: (message) => void inbox.push(message as { id: number }),
      onMessage: (handler) => void (onMessage = handler as (message: unknown) => void),
      onExit: () => {},
      terminate: async () => {},
    };
    started.push({ handle, answer: () => inbox.splice(0).forEach(({ id }) => onMessage({ id, ok: true })) });
    return handle;
  };
  return { started, startWorker };
}

describe("WorkerPool", () => {
  it("starts a spare ahead of the first load and another when one is taken; settled() waits until each spare has booted", async () => {
    const { started, startWorker } = heldWorkers();
    const pool = new WorkerPool(startWorker, { maxIdle: 2, module: new URL("file:///worker.ts") });
    expect(started).toHaveLength(1);
    let settled = false;
    void pool.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    started[0]!.answer();
    await pool.settled();

    pool.take(); // takes the first spare, starts a second one
    expect(started).toHaveLength(2);
    settled = false;
    void pool.settled().then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(settled).toBe(false); // auto's timing waits for this boot: it would share the cores
    started[1]!.answer();
    await pool.settled();
  });
});
