/**
 * What the batcher knows about requests still to come: the mean gap between arrivals, and whether
 * waiting has been paying, i.e. whether a request joined during recent waits. In a closed loop
 * (each client waits for its answer before sending again: c=1, the dev server) nothing can join a
 * lone request, however short the gap was; the second signal says so after a few waits.
 */
export class ArrivalOutlook {
  #lastArrival?: number;
  #gapMs?: number;
  /** Smoothed share of recent waits that gained a request (starts optimistic: the config asked to wait). */
  #payoff = 1;
  #declined = 0;
  /** Candidates declined between two probe waits while waits do not pay: 8, doubling to PROBE_MAX. */
  #probeEvery = PROBE_FIRST;

  /** Mean gap between arrivals in milliseconds (undefined before two arrivals). */
  get gapMs(): number | undefined {
    return this.#gapMs;
  }

  get payoff(): number {
    return this.#payoff;
  }

  arrived(atMs: number): void {
    if (this.#lastArrival !== undefined) {
      const gap = atMs - this.#lastArrival;
      this.#gapMs = this.#gapMs === undefined ? gap : this.#gapMs + (gap - this.#gapMs) / 16;
    }
    this.#lastArrival = atMs;
  }

  /** A wait ended: did any request join the batch during it? */
  waited(gained: boolean): void {
    this.#payoff += ((gained ? 1 : 0) - this.#payoff) / 4;
  }

  /**
   * Whether another request can plausibly join within a wait: waits have been paying (at least
   * one in five gained a request). Otherwise one candidate in `#probeEvery` waits anyway, so a
   * change in traffic is noticed; each probe that gains nothing doubles the interval (8 to 128),
   * so a lone client (c=1) pays a probe's wait on one request in 128, not one in 8 — at
   * a 500 µs delay, 4 µs on average instead of 62. A probe that gains resets it.
   */
  worthWaiting(): boolean {
    if (this.#payoff >= 0.2) {
      this.#probeEvery = PROBE_FIRST;
      this.#declined = 0;
      return true;
    }
    if (++this.#declined < this.#probeEvery) return false;
    this.#declined = 0;
    this.#probeEvery = Math.min(this.#probeEvery * 2, PROBE_MAX);
    return true;
  }
}

const PROBE_FIRST = 8;
const PROBE_MAX = 128;
