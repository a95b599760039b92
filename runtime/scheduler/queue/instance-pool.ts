import type { ScaledInstances } from "../scheduler.ts";

/**
 * The instances of one scheduler that runs a batch per instance (the dynamic and sequence
 * batchers): which are free, how many serve, and the removals (autoscaling down) that wait for a
 * busy one to come back. A removal takes a free instance at once, else the next one released.
 * `added` is the scheduler's pump: an added instance takes queued work at once.
 */
export class InstancePool<I> implements ScaledInstances<I> {
  readonly #free: I[];
  #total: number;
  readonly #removals: ((instance: I) => void)[] = [];
  readonly #added: () => void;

  constructor(instances: readonly I[], added: () => void) {
    if (instances.length === 0) throw new Error("a batcher needs at least one instance");
    this.#free = [...instances];
    this.#total = instances.length;
    this.#added = added;
  }

  get count(): number {
    return this.#total - this.#removals.length;
  }

  /** Instances held now, those a pending removal will take included. */
  get total(): number {
    return this.#total;
  }

  get hasFree(): boolean {
    return this.#free.length > 0;
  }

  /** The instance `take()` would give, left in the pool. */
  peek(): I | undefined {
    return this.#free.at(-1);
  }

  take(): I | undefined {
    return this.#free.pop();
  }

  /** Back from a run: to a waiting removal, else free. */
  release(instance: I): void {
    const removal = this.#removals.shift();
    if (!removal) return void this.#free.push(instance);
    this.#total--;
    removal(instance);
  }

  add(instance: I): void {
    this.#total++;
    this.release(instance);
    this.#added();
  }

  remove(): Promise<I> {
    if (this.count <= 1) return Promise.reject(new Error("cannot remove the last instance"));
    const free = this.#free.pop();
    if (free === undefined) return new Promise((resolve) => this.#removals.push(resolve));
    this.#total--;
    return Promise.resolve(free);
  }
}
