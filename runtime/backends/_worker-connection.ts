import { invalidArg, RuntimeError } from "../core/mod.ts";
import type { ModelSignature, Tensor, WorkerHandle } from "../core/mod.ts";
import type { OrtSessionSettings } from "./_ort-session.ts";
import { transferables } from "./_worker-protocol.ts";
import type { WorkerReply, WorkerRequest } from "./_worker-protocol.ts";

type Call = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, "id"> : never) : never;

/**
 * The main thread's side of one ORT worker: numbered requests, one promise per reply. If the
 * worker dies, everything pending fails with INTERNAL and later calls fail at once.
 */
export class WorkerConnection {
  readonly #handle: WorkerHandle;
  readonly #pending = new Map<number, { resolve(reply: WorkerReply & { ok: true }): void; reject(error: Error): void }>();
  #next = 1;
  #dead?: string;

  constructor(handle: WorkerHandle) {
    this.#handle = handle;
    handle.onMessage((message) => {
      const reply = message as WorkerReply;
      const pending = this.#pending.get(reply.id);
      if (!pending) return;
      this.#pending.delete(reply.id);
      if (reply.ok) pending.resolve(reply);
      else pending.reject(reply.invalid ? invalidArg(reply.error) : new RuntimeError("INTERNAL", reply.error));
    });
    handle.onExit((reason) => {
      this.#dead = reason;
      for (const p of this.#pending.values()) p.reject(new RuntimeError("INTERNAL", `onnxruntime worker stopped: ${reason}`));
      this.#pending.clear();
    });
  }

  load(model: Uint8Array, settings: OrtSessionSettings, pkg: "node" | "web" = "node"): Promise<ModelSignature> {
    return this.#call({ op: "load", model, settings, package: pkg }).then((r) => r.signature!);
  }

  /** Runs a batch. Feeds that own their buffer move to the worker: the caller must not reuse them. */
  run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
    return this.#call({ op: "run", feeds }, transferables(feeds)).then((r) => r.outputs!);
  }

  /** True until the worker died or was terminated. */
  get alive(): boolean {
    return this.#dead === undefined;
  }

  /** Releases the session but keeps the thread, so a later load skips the thread's start-up. */
  async release(): Promise<void> {
    if (!this.#dead) await this.#call({ op: "release" });
  }

  /** Releases the session and stops the thread. */
  async close(): Promise<void> {
    if (!this.#dead) await this.#call({ op: "release" }).catch(() => undefined);
    this.#dead ??= "terminated";
    await this.#handle.terminate();
  }

  #call(call: Call, transfer?: ArrayBuffer[]): Promise<WorkerReply & { ok: true }> {
    if (this.#dead) return Promise.reject(new RuntimeError("INTERNAL", `onnxruntime worker stopped: ${this.#dead}`));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#handle.postMessage({ ...call, id }, transfer);
    });
  }
}
