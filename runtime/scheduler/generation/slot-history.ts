/**
 * The last iterations' slots of a generator's loop, for the dashboard's "bus" picture: per
 * iteration, the sequence in each of the `max_num_seqs` slots (0: empty). A sequence keeps its
 * slot from admission to its end, so the picture shows request-level batching's emptying batches
 * and continuous batching's refills.
 */

/** How many recent iterations are kept. */
export const RECENT_ITERATIONS = 160;

export class SlotHistory {
  /** The sequence in each slot now (0: empty). */
  readonly slots: Int32Array;
  readonly #ring: Int32Array[] = [];
  #next = 0;
  #count = 0;

  constructor(width: number) {
    this.slots = new Int32Array(width);
    for (let i = 0; i < RECENT_ITERATIONS; i++) this.#ring.push(new Int32Array(width));
  }

  /** Seats sequence `id` in the first free slot. */
  seat(id: number): void {
    this.slots[this.slots.indexOf(0)] = id;
  }

  /** Frees sequence `id`'s slot. */
  free(id: number): void {
    this.slots[this.slots.indexOf(id)] = 0;
  }

  /** Records the slots as they are for this iteration. */
  record(): void {
    this.#ring[this.#next]!.set(this.slots);
    this.#next = (this.#next + 1) % RECENT_ITERATIONS;
    this.#count++;
  }

  /** The recorded iterations, oldest first. */
  recent(): number[][] {
    const start = this.#count < RECENT_ITERATIONS ? 0 : this.#next;
    const out: number[][] = [];
    for (let i = 0; i < Math.min(this.#count, RECENT_ITERATIONS); i++) out.push(Array.from(this.#ring[(start + i) % RECENT_ITERATIONS]!));
    return out;
  }
}
