/**
 * Whether another inference request can still reach the server before one is answered, for a
 * batcher deciding whether to wait for a fuller batch. On HTTP/1.1 a connection carries one request
 * at a time, so once every open connection carries a request the server has read whole and handed
 * to a model, nothing more can arrive until an answer leaves or a client opens another connection:
 * waiting then only delays the batch (a closed loop of N keep-alive clients, Triton's perf_analyzer
 * at concurrency N, the dev server's lone client).
 *
 * Trusted only while clients reuse their connections: until twice as many requests as there are
 * open connections (at least `REUSE_MIN`) have settled since a connection last opened, arrivals
 * count as possible, so clients that open a connection per request (no keep-alive) are batched by
 * the delay as before. The adapter reports connections where its HTTP server tells it of them
 * (Node); where it does not (Bun, Deno, a server built on `app.fetch`), arrivals are always
 * possible. A request still being read is not settled (it is arriving), and neither is one to a
 * handler or an ensemble, which can send requests of its own from inside the server. HTTP/1.1
 * pipelining could bring a second request on a connection whose first is settled: the batch then
 * leaves without it, which costs batching, never an answer.
 */
export class ClientConnections {
  #open = 0;
  #reported = false;
  #settled = 0;
  /** Requests settled since a connection last opened (capped). */
  #sinceOpened = 0;

  /** A client connection opened (the adapter). */
  opened(): void {
    this.#reported = true;
    this.#open++;
    this.#sinceOpened = 0;
  }

  /** A client connection closed (the adapter). */
  closed(): void {
    this.#open--;
  }

  /** A request read whole goes to a function that sends no requests of its own; `answered()` follows. */
  settled(): void {
    this.#settled++;
    if (this.#sinceOpened < REUSE_CAP) this.#sinceOpened++;
  }

  answered(): void {
    this.#settled--;
  }

  /** False only when clients reuse their connections and every open one carries a settled request. */
  mayArrive(): boolean {
    return !this.#reported || this.#settled < this.#open || this.#sinceOpened < Math.max(REUSE_MIN, 2 * this.#open);
  }
}

const REUSE_MIN = 8;
const REUSE_CAP = 1 << 30;
