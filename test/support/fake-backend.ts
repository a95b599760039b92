import type { Backend, LoadOptions, Session } from "../../runtime/backends/mod.ts";
import type { Tensor } from "../../runtime/mod.ts";

/**
 * A backend without onnxruntime for lifecycle tests: every "model" is y = x + k, where k is the
 * model file's first byte, so a test can tell versions apart by their answers. Loads can be held
 * open (`hold`) to observe LOADING, and fail when the file's first byte is 255.
 */
export class FakeBackend implements Backend {
  readonly name = "fake";
  loads = 0;
  live = 0;
  runs = 0;
  #held: (() => void)[] = [];
  #running: (() => void)[] = [];
  hold = false;
  /** When true, runs wait for `finishRuns()`. */
  gateRuns = false;
  /** When true, the next run kills its session's "thread": it fails and the session reports itself dead. */
  killNextRun = false;
  readonly #kills: (() => void)[] = [];

  async load(model: Uint8Array, _options: LoadOptions): Promise<Session> {
    this.loads++;
    if (this.hold) await new Promise<void>((resolve) => this.#held.push(resolve));
    if (model[0] === 255) throw new Error("corrupt model");
    const k = model[0] ?? 0;
    this.live++;
    let released = false;
    let dead = false;
    this.#kills.push(() => (dead = true));
    return {
      get alive() {
        return !dead;
      },
      signature: { inputs: [{ name: "x", datatype: "FP32", shape: [-1, 1] }], outputs: [{ name: "y", datatype: "FP32", shape: [-1, 1] }] },
      provider: "cpu",
      run: async (feeds: Record<string, Tensor>) => {
        this.runs++;
        if (dead) throw new Error("worker stopped: killed");
        if (this.killNextRun) {
          this.killNextRun = false;
          dead = true;
          throw new Error("worker stopped: killed");
        }
        if (this.gateRuns) await new Promise<void>((resolve) => this.#running.push(resolve));
        const x = feeds.x!;
        if (!x) throw new Error("no input x");
        return { y: { datatype: "FP32", shape: [...x.shape], data: (x.data as Float32Array).map((v) => v + k) } };
      },
      release: async () => {
        if (!released) this.live--;
        released = true;
      },
    };
  }

  /** Kills every session's "thread" between runs, as a worker that exits on its own. */
  killAll(): void {
    for (const kill of this.#kills.splice(0)) kill();
  }

  /** Lets gated runs finish. */
  finishRuns(): void {
    for (const done of this.#running.splice(0)) done();
  }

  /** Lets held loads finish. */
  release(): void {
    for (const done of this.#held.splice(0)) done();
  }
}

/** A model file for the fake backend: `size` bytes whose first byte is `k`. */
export function fakeModel(k: number, size = 1000): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes[0] = k;
  return bytes;
}
