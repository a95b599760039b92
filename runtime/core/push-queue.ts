/**
 * A queue one side pushes into and one reader drains as an async generator, which waits while
 * it is empty: a stream's buffer between a producer that does not wait for its reader (the
 * generation loop, a gRPC client's messages, a request's choices) and the one reading it.
 * `end(error)` ends it after what was pushed; the reader then throws `error`, if any. Pushes
 * after the end are dropped; only the first end counts.
 */
export class PushQueue<T> {
  readonly #items: T[] = [];
  #ended = false;
  #error?: unknown;
  #wake?: () => void;

  /** Items pushed and not yet read. */
  get length(): number {
    return this.#items.length;
  }

  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#wake?.();
  }

  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    this.#wake?.();
  }

  async *read(): AsyncGenerator<T, void, undefined> {
    for (;;) {
      if (this.#items.length > 0) {
        yield this.#items.shift()!;
        continue;
      }
      if (this.#ended) {
        if (this.#error !== undefined) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}
