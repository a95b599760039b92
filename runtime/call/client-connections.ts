import { systemClock } from "../core/mod.ts";
import type { Clock } from "../core/mod.ts";

/** One client connection, as the adapter reported it (`ClientConnections.opened`). */
export interface ClientConnection {
  /** It carried a settled inference request: it is an inference client's. */
  infers: boolean;
  /** Its settled requests not yet answered (more than one only with HTTP/1.1 pipelining). */
  settled: number;
  closed: boolean;
  /** When its last answer was ready (clock ms), while it carries no settled request. */
  answeredAt?: number;
}

/**
 * Whether another inference request can still reach the server before one is answered, for a
 * batcher deciding whether to wait for a fuller batch. On HTTP/1.1 a connection carries one request
 * at a time, so once every open connection of an inference client carries a request the server
 * has read whole and handed to a model, nothing more can arrive until an answer leaves or a client
 * opens another connection: waiting then only delays the batch (a closed loop of N keep-alive
 * clients, Triton's perf_analyzer at concurrency N, the dev server's lone client).
 *
 * Connections that never carried inference (a readiness probe's, a metrics scraper's, a client
 * still reading metadata) are not counted: they would otherwise keep every batcher waiting. The
 * count is trusted only while clients reuse their connections: until twice as many requests as
 * there are inference connections (at least `REUSE_MIN`) have settled since any connection last
 * opened, arrivals count as possible, so clients that open a connection per request (no
 * keep-alive), and a client's first request on a new connection, are batched by the delay as
 * before. The adapter reports connections where its HTTP server tells it of them (Node); where it
 * does not (Bun's own server, one built on `runtime.fetch`), arrivals are always possible. A request
 * still being read is not settled (it is arriving), and neither is one to a handler or an
 * ensemble, which can send requests of its own from inside the server. A connection that closes
 * stops counting at once, with the requests it still has running. Where the count is wrong
 * (HTTP/1.1 pipelining, an idle connection's first inference request) a batch leaves without a
 * request it could have waited for: that costs batching, never an answer.
 *
 * It is the batchers' `Arrivals` (scheduler.ts; runtime.ts hands it to them). `expectedAt()`
 * predicts the next arrival where the count is trusted: each inference connection between an
 * answer and its next request is expected back one turnaround after its answer (the smoothed time
 * from an answer to that connection's next settled request: encoding, the network, the client,
 * reading and decoding). Connections silent for `DORMANT` turnarounds are not expected (a pool's
 * spare connections, a client that paused) until they send again.
 */
export class ClientConnections {
  readonly #clock: Pick<Clock, "now">;
  #reported = false;
  /** Open connections that carried inference. */
  #inferring = 0;
  #settled = 0;
  /** Requests settled since a connection last opened (capped). */
  #sinceOpened = 0;
  /** Smoothed time from a connection's answer to its next settled request, ms. */
  #turnaroundMs?: number;
  /** Inference connections between an answer and their next request, oldest answer first (insertion order). */
  readonly #between = new Set<ClientConnection>();
  #dropped = 0;

  constructor(options: { clock?: Pick<Clock, "now"> } = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  /** A client connection opened (the adapter); give it to `closed()` and to requests it carries. */
  opened(): ClientConnection {
    this.#reported = true;
    this.#sinceOpened = 0;
    return { infers: false, settled: 0, closed: false };
  }

  /** A client connection closed (the adapter): its requests still running count no more. */
  closed(connection: ClientConnection): void {
    connection.closed = true;
    this.#between.delete(connection);
    this.#settled -= connection.settled;
    if (connection.infers) this.#inferring--;
  }

  /** The adapter dropped a connection whose client stopped taking its answers (`--write-timeout`). */
  dropped(): void {
    this.#dropped++;
  }

  /** Connections dropped so far (`tensorfn_connections_dropped_total`). */
  get droppedCount(): number {
    return this.#dropped;
  }

  /** A request on `connection`, read whole, goes to a function that sends no requests of its own; `answered()` follows. */
  settled(connection: ClientConnection): void {
    if (!connection.infers) {
      connection.infers = true;
      this.#inferring++;
    }
    if (this.#between.delete(connection)) {
      const sample = this.#clock.now() - connection.answeredAt!;
      this.#turnaroundMs = this.#turnaroundMs === undefined ? sample : this.#turnaroundMs + (sample - this.#turnaroundMs) / 16;
    }
    connection.settled++;
    if (!connection.closed) this.#settled++;
    if (this.#sinceOpened < REUSE_CAP) this.#sinceOpened++;
  }

  answered(connection: ClientConnection): void {
    connection.settled--;
    if (connection.closed) return;
    this.#settled--;
    if (connection.settled > 0) return;
    connection.answeredAt = this.#clock.now();
    this.#between.add(connection);
  }

  /** False only when clients reuse their connections and every inference connection carries a settled request. */
  mayArrive(): boolean {
    return !this.#trusted() || this.#settled < this.#inferring;
  }

  /**
   * When the next inference request is expected (clock ms): the earliest answer still awaiting its
   * connection's next request, plus the turnaround. Infinity when no connection is expected back
   * (all carry a request, or those that do not have been silent for `DORMANT` turnarounds);
   * undefined while the count is not trusted or no turnaround was seen.
   */
  expectedAt(): number | undefined {
    if (!this.#trusted() || this.#turnaroundMs === undefined) return undefined;
    const now = this.#clock.now();
    for (const connection of this.#between) {
      if (now - connection.answeredAt! <= DORMANT * this.#turnaroundMs) return connection.answeredAt! + this.#turnaroundMs;
      // Silent too long to predict anything: it counts again from its next request (no turnaround sample from this pause).
      this.#between.delete(connection);
    }
    return Infinity;
  }

  #trusted(): boolean {
    return this.#reported && this.#sinceOpened >= Math.max(REUSE_MIN, 2 * this.#inferring);
  }
}

/** Turnarounds after which a connection that has not sent again is no longer expected. */
const DORMANT = 4;

const REUSE_MIN = 8;
const REUSE_CAP = 1 << 30;
