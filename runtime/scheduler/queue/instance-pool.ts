/**
 * The instances of one scheduler that runs a batch per instance (the dynamic and sequence
 * batchers): which are free, how many serve, and the removals (autoscaling down) that wait for a
 * busy one to come back. A removal takes a free instance at once, else the next one released.
 */
export class InstancePool<I> {
  readonly #free: I[];
  #total: number;
  readonly #removals: ((instance: I) => void)[] = [];

  constructor(instances: readonly I[]) {
    this.#free = [...instances];
    this.#total = instances.length;
  }

  /** Instances serving now (free or busy), after pending removals. */
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
  }

  /** Resolves with the instance taken out of service, for its caller to release its session. */
  remove(): Promise<I> {
    if (this.count <= 1) return Promise.reject(new Error("cannot remove the last instance"));
    const free = this.#free.pop();
    if (free === undefined) return new Promise((resolve) => this.#removals.push(resolve));
    this.#total--;
    return Promise.resolve(free);
  }
}
