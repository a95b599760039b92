/**
 * Requests waiting in a queue, registered under the signal that cancels them (a client going
 * away, a deadline): one abort listener per signal, not per request — a signal is usually a
 * connection's, shared by the requests it carries one after another, and an EventTarget listener
 * added and removed per queued request cost ~2.5 µs of the hot path (a profile of simple at 8 JSON
 * clients, Node). A listener holds its watch weakly, so a keep-alive connection does not keep an
 * unloaded version's scheduler alive; a connection outlives many schedulers (each wake, reload or
 * new version makes one), so `close()` takes the listeners off once the scheduler has drained.
 * For every scheduler with a queue: dynamic, sequence, continuous.
 */
export class SignalWatch<T> {
  readonly #cancel: (waiter: T) => void;
  /** Waiting requests by the signal they are cancelled by. */
  readonly #waiting = new WeakMap<AbortSignal, Set<T>>();
  /** The abort listeners added, by signal held weakly (a closed connection's signal goes). */
  #listeners: { signal: WeakRef<AbortSignal>; listener: () => void }[] = [];
  /** Length at which `#listeners` is next cleared of signals already collected. */
  #pruneAt = 64;

  /** `cancel`: takes one waiter out when its signal aborts (it must not hold the owner strongly through the signal: it is called through a WeakRef). */
  constructor(cancel: (waiter: T) => void) {
    this.#cancel = cancel;
  }

  /** Registers `waiter` under `signal` until `forget`. */
  watch(signal: AbortSignal, waiter: T): void {
    let waiting = this.#waiting.get(signal);
    if (!waiting) {
      const entries = new Set<T>();
      const watch = new WeakRef(this);
      waiting = entries;
      this.#waiting.set(signal, entries);
      const listener = () => {
        const alive = watch.deref();
        if (alive) for (const waiter of [...entries]) alive.#cancel(waiter);
      };
      signal.addEventListener("abort", listener, { once: true });
      this.#listening(signal, listener);
    }
    waiting.add(waiter);
  }

  /** Takes `waiter` off `signal` (it left the queue). */
  forget(signal: AbortSignal, waiter: T): void {
    this.#waiting.get(signal)?.delete(waiter);
  }

  /** Removes every listener (the owner stopped and drained). */
  close(): void {
    for (const { signal, listener } of this.#listeners) signal.deref()?.removeEventListener("abort", listener);
    this.#listeners = [];
  }

  #listening(signal: AbortSignal, listener: () => void): void {
    this.#listeners.push({ signal: new WeakRef(signal), listener });
    if (this.#listeners.length < this.#pruneAt) return;
    this.#listeners = this.#listeners.filter((l) => l.signal.deref() !== undefined);
    this.#pruneAt = Math.max(64, 2 * this.#listeners.length);
  }
}
