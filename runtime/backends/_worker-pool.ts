import type { WorkerHandle } from "../core/mod.ts";
import { WorkerConnection } from "./_worker-connection.ts";

/**
 * Idle ORT worker threads, ready for the next session. Starting a thread (and loading the ORT
 * addon in it) costs tens of milliseconds; a parked function coming back, or a cold one loading
 * for the first time, should pay only for creating its session. Released sessions return their
 * thread here, up to `maxIdle`; one thread is started ahead of the first load.
 */
export class WorkerPool {
  readonly #start: () => WorkerConnection;
  readonly #maxIdle: number;
  #idle: WorkerConnection[] = [];
  /** Resolves once the spare started last has booted (its first reply). */
  #booted: Promise<void> = Promise.resolve();

  constructor(startWorker: (module: URL) => WorkerHandle, options: { maxIdle: number; module: URL; prestart?: boolean }) {
    this.#start = () => new WorkerConnection(startWorker(options.module));
    this.#maxIdle = options.maxIdle;
    if (options.maxIdle > 0 && options.prestart !== false) this.#idle.push(this.#spare());
  }

  /** An idle thread if there is one (starting a replacement in the background), else a new one. */
  take(): WorkerConnection {
    let worker = this.#idle.pop();
    while (worker && !worker.alive) worker = this.#idle.pop();
    const taken = worker ?? this.#start();
    if (this.#idle.length === 0 && this.#maxIdle > 0) this.#idle.push(this.#spare());
    return taken;
  }

  /**
   * Resolves once the spares started so far have booted. A spare's start-up (a thread, its
   * modules) takes a core for tens of milliseconds: `execution_thread: auto` waits for it before
   * timing a model, which it would otherwise slow down by half on two cores.
   */
  settled(): Promise<void> {
    return this.#booted;
  }

  #spare(): WorkerConnection {
    const worker = this.#start();
    // A release with no session loaded is answered as soon as the worker's module runs.
    const booted = worker.release().catch(() => undefined);
    this.#booted = Promise.all([this.#booted, booted]).then(() => undefined);
    return worker;
  }

  /** Releases a worker's session and keeps the thread if the pool has room; else stops it. */
  async give(worker: WorkerConnection): Promise<void> {
    if (worker.alive && this.#idle.length < this.#maxIdle) {
      await worker.release().catch(() => worker.close());
      if (worker.alive) this.#idle.push(worker);
      return;
    }
    await worker.close();
  }

  /** Stops every idle thread. */
  async drain(): Promise<void> {
    await Promise.all(this.#idle.splice(0).map((w) => w.close()));
  }
}
