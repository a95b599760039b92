/**
 * A scheduler's stop, the one way every scheduler does it: `stop` marks it stopping (new requests
 * are refused while `stopping`) and resolves once nothing is in flight; the scheduler calls
 * `settled` whenever work ends, which wakes the stop when that was the last of it.
 */
export class Drain {
  #stopping = false;
  readonly #waiters: (() => void)[] = [];

  get stopping(): boolean {
    return this.#stopping;
  }

  /** Marks the scheduler stopping; resolves now with `inflight` 0, else at the `settled` that sees 0. */
  stop(inflight: number): Promise<void> {
    this.#stopping = true;
    return inflight === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** After work ended, with what is still in flight: wakes the stop once stopping and none is. */
  settled(inflight: number): void {
    if (this.#stopping && inflight === 0) for (const resolve of this.#waiters.splice(0)) resolve();
  }
}
