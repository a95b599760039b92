import { describe, expect, it } from "vitest";
import type { Backend } from "../../../runtime/backends/mod.ts";
import { loadDeployment } from "../../../runtime/lifecycle/load-deployment.ts";
import { PlacementMemory } from "../../../runtime/lifecycle/execution-thread.ts";
import { ManagedVersion, sharedBytes } from "../../../runtime/lifecycle/managed-version.ts";
import type { VersionLoader } from "../../../runtime/lifecycle/managed-version.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { declared, timedBackend } from "./_timed-backend.ts";

const quiet = { info() {}, warn() {}, error() {} };
const SIZE = 4096;

/** A version of function `f` whose file is read afresh (a new array) on every `readBytes`, like a disk. */
function version(backend: Backend, park: "host" | "none" = "host") {
  // `changing`: every read returns new content (the file was edited between reloads).
  const reads = { count: 0, changing: false };
  const clock = new FakeClock();
  const placements = new PlacementMemory();
  const loader: VersionLoader = {
    readBytes: async () => {
      reads.count++;
      return new Uint8Array(SIZE).fill(reads.changing ? reads.count : 7);
    },
    load: (bytes, { stats, signal }) =>
      loadDeployment({ declared: declared(), version: 1, bytes, backend, services: { clock, log: quiet }, cpuCount: 2, stats, signal, placements }),
  };
  const managed = new ManagedVersion("f", 1, { loader, idle: { timeoutMs: 0, park }, clock, log: quiet });
  return { managed, loader, reads };
}

describe("ManagedVersion park and wake", () => {
  it("keeps the bytes in shared memory; every wake loads from them, reads no file, times nothing, and reports the measurement", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 4000 });
    const { managed, reads } = version(backend);
    await managed.ensureReady();
    const measured = managed.deployment!.config.parameters;
    await managed.park();
    expect(managed.state).toBe("PARKED");
    expect(managed.footprint()).toEqual({ host: SIZE, device: 0 });

    for (let wake = 0; wake < 2; wake++) {
      const woken = await managed.ensureReady();
      expect(woken.config.parameters).toEqual(measured);
      await managed.park();
    }
    expect(reads.count).toBe(1);
    expect(seen.timings).toBe(1);
    const [first, ...wakes] = seen.models;
    expect(first!.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(wakes).toHaveLength(2);
    for (const bytes of wakes) expect(bytes).toBe(first);
    expect(first).toEqual(new Uint8Array(SIZE).fill(7));
    expect(managed.footprintWhenParked()).toEqual({ host: SIZE, device: 0 });
  });

  it("a request arriving while a park releases the sessions wakes it again, and that deployment is the one kept (and later released)", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 4000 });
    const { managed } = version(backend);
    await managed.ensureReady();
    const parking = managed.park();
    const woken = managed.ensureReady(); // arrives while the park awaits the old deployment's close
    await parking;
    const deployment = await woken;
    expect(managed.state).toBe("READY");
    expect(managed.deployment).toBe(deployment);
    await managed.park();
    expect(managed.state).toBe("PARKED");
    expect(seen.released).toBe(seen.threads.length); // every session created was released
  });

  it("loads an event-loop deployment's wake straight onto the event loop, with the measurement", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 40, maxBatchUs: 300 });
    const { managed } = version(backend);
    await managed.ensureReady();
    await managed.park();
    await managed.ensureReady();
    expect(seen.threads).toEqual(["worker", "main", "main"]);
    expect(seen.timings).toBe(4); // one measurement: batch 1 three times (close to the threshold), the largest batch once
    expect(managed.deployment!.config.parameters.execution_thread_measured_max_batch_us).toEqual({ string_value: "300.0" });
  });

  it("with `park: none`, keeps no bytes and loads the file as read", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 4000 });
    const { managed, reads } = version(backend, "none");
    await managed.ensureReady();
    expect(managed.footprintWhenParked()).toEqual({ host: 0, device: 0 });
    expect(seen.models[0]!.buffer).toBeInstanceOf(ArrayBuffer);
    await managed.park();
    expect(managed.state).toBe("UNAVAILABLE");
    await managed.ensureReady();
    expect(reads.count).toBe(2);
  });

  it("after a reload, parked or READY, reads the new file and measures it again; a wake after it does not", async () => {
    const { backend, seen } = timedBackend({ batch1Us: 4000 });
    const { managed, loader, reads } = version(backend);
    reads.changing = true;
    await managed.ensureReady();
    await managed.park();
    await managed.reload(loader, { timeoutMs: 0, park: "host" });
    await managed.ensureReady();
    expect([reads.count, seen.timings]).toEqual([2, 2]);
    await managed.reload(loader, { timeoutMs: 0, park: "host" });
    expect([reads.count, seen.timings]).toEqual([3, 3]);
    await managed.park();
    await managed.ensureReady();
    expect([reads.count, seen.timings]).toEqual([3, 3]);
  });

  it("an unload during a wake cancels it and drops the parked bytes: the next load reads the file", async () => {
    const { backend: timed } = timedBackend({ batch1Us: 4000 });
    let hold: Promise<void> | undefined;
    let open = () => {};
    const backend: Backend = {
      ...timed,
      load: async (model, options) => {
        await hold;
        return await timed.load(model, options);
      },
    };
    const { managed, reads } = version(backend);
    await managed.ensureReady();
    await managed.park();
    hold = new Promise((resolve) => (open = resolve));
    const wake = managed.ensureReady();
    const unloaded = managed.unload();
    open();
    await expect(wake).rejects.toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/cancelled by an unload/) });
    await unloaded;
    expect(managed.state).toBe("UNAVAILABLE");
    expect(managed.footprint()).toEqual({ host: 0, device: 0 });
    hold = undefined;
    await managed.ensureReady();
    expect(reads.count).toBe(2);
  });

  it("keeps the parked bytes when a wake fails (its worker died), and the next wake loads from them", async () => {
    const { backend: timed, seen } = timedBackend({ batch1Us: 4000 });
    let failNext = false;
    const backend: Backend = {
      ...timed,
      load: async (model, options) => {
        if (!failNext) return await timed.load(model, options);
        failNext = false;
        throw new Error("onnxruntime worker stopped: exited with code 1");
      },
    };
    const { managed, reads } = version(backend);
    await managed.ensureReady();
    await managed.park();
    failNext = true;
    await expect(managed.ensureReady()).rejects.toThrow(/worker stopped/);
    expect(managed.state).toBe("FAILED");
    await managed.ensureReady();
    expect(managed.state).toBe("READY");
    expect(reads.count).toBe(1);
    expect(seen.models.at(-1)!.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(seen.models.at(-1)).toEqual(new Uint8Array(SIZE).fill(7));
  });
});

/**
 * A version whose backend writes an optimised form (half the size, filled with 9) wherever a load
 * is told to save one, and whose scratch files live in a map.
 */
function optimizingVersion(timed: Backend, options: { failFromForm?: () => boolean } = {}) {
  const files = new Map<string, Uint8Array>();
  const saves: (string | undefined)[] = [];
  let scratches = 0;
  const backend: Backend = {
    ...timed,
    load: async (model, loadOptions) => {
      saves.push(loadOptions.saveOptimizedTo);
      if (model[0] === 9 && options.failFromForm?.()) throw new Error("cannot read this form");
      if (loadOptions.saveOptimizedTo) files.set(loadOptions.saveOptimizedTo, new Uint8Array(SIZE / 2).fill(9));
      return await timed.load(model, loadOptions);
    },
  };
  const reads = { count: 0 };
  const clock = new FakeClock();
  const placements = new PlacementMemory();
  const warnings: string[] = [];
  const optimizedForm = {
    scratch: async (name: string) => {
      const path = `/scratch/${++scratches}/${name}`;
      return { path, remove: async () => void files.delete(path) };
    },
    read: async (path: string) => {
      const form = files.get(path);
      if (!form) throw new Error(`ENOENT: ${path}`);
      return sharedBytes(form);
    },
  };
  const loader: VersionLoader = {
    readBytes: async () => {
      reads.count++;
      return new Uint8Array(SIZE).fill(7);
    },
    load: (bytes, { stats, signal, optimize }) =>
      loadDeployment({ declared: declared(), version: 1, bytes, backend, services: { clock, log: quiet }, cpuCount: 2, stats, signal, placements, optimizedForm: optimize ? optimizedForm : undefined }),
  };
  const log = { ...quiet, warn: (m: string) => void warnings.push(m) };
  const managed = new ManagedVersion("f", 1, { loader, idle: { timeoutMs: 0, park: "host" }, clock, log });
  return { managed, reads, saves, files, warnings };
}

describe("ManagedVersion with a backend's optimised form of the model", () => {
  it("the first park makes it, the version keeps it instead of the file's bytes, and every wake loads from it without measuring again", async () => {
    const { backend: timed, seen } = timedBackend({ batch1Us: 4000 });
    const { managed, reads, saves, files } = optimizingVersion(timed);
    await managed.ensureReady();
    expect(saves).toEqual([undefined]); // a load, which a request waits for, makes none
    await managed.park();
    // The park made it with one more session (released), read it back and removed the file.
    expect(saves).toEqual([undefined, "/scratch/1/model.ort"]);
    expect(seen.released).toBe(2);
    expect(files.size).toBe(0);
    expect(managed.footprintWhenParked()).toEqual({ host: SIZE / 2, device: 0 });
    for (let wake = 0; wake < 2; wake++) {
      await managed.ensureReady();
      await managed.park();
    }
    expect(saves).toEqual([undefined, "/scratch/1/model.ort", undefined, undefined]);
    const [first, forming, ...wakes] = seen.models;
    expect([first, forming]).toEqual([new Uint8Array(SIZE).fill(7), new Uint8Array(SIZE).fill(7)]);
    for (const bytes of wakes) {
      expect(bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(bytes).toEqual(new Uint8Array(SIZE / 2).fill(9));
    }
    expect([reads.count, seen.timings]).toEqual([1, 1]);
  });

  it("a park for memory room makes no optimised form (it needs the memory now); a later idle park does", async () => {
    const { backend: timed } = timedBackend({ batch1Us: 4000 });
    const { managed, saves } = optimizingVersion(timed);
    await managed.ensureReady();
    await managed.park("budget");
    expect(saves).toEqual([undefined]);
    await managed.ensureReady();
    await managed.park("idle");
    expect(saves).toEqual([undefined, undefined, "/scratch/1/model.ort"]);
  });

  it("a wake the optimised form cannot serve loads the model file instead, says so, and the next park makes the form again", async () => {
    const { backend: timed } = timedBackend({ batch1Us: 4000 });
    let fail = true;
    const { managed, reads, saves, warnings } = optimizingVersion(timed, { failFromForm: () => fail && !(fail = false) });
    await managed.ensureReady();
    await managed.park();
    await managed.ensureReady();
    expect(managed.state).toBe("READY");
    expect(reads.count).toBe(2);
    expect(warnings).toEqual([expect.stringMatching(/waking from the optimised model failed \(cannot read this form\); loading the model file/)]);
    await managed.park();
    // The fallback dropped the form; the next park makes one again.
    expect(saves).toEqual([undefined, "/scratch/1/model.ort", undefined, undefined, "/scratch/2/model.ort"]);
  });
});
