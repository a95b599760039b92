/** How one priority level treats its requests (Triton's ModelQueuePolicy, in milliseconds). */
export interface LevelPolicy {
  timeoutAction: "REJECT" | "DELAY";
  /** 0 = no timeout. */
  defaultTimeoutMs: number;
  allowTimeoutOverride: boolean;
  /** 0 = unbounded. */
  maxQueueSize: number;
}

/** One queued item and its place in the queue. */
export interface QueueEntry<T> {
  readonly item: T;
  readonly level: number;
  readonly enqueuedAt: number;
  /** Set once a DELAY timeout expired: the entry now waits behind its level's punctual ones. */
  delayed: boolean;
}

/**
 * Triton's priority queue: levels 1..N (1 first), each a FIFO of punctual entries followed by a
 * FIFO of delayed ones (entries whose DELAY timeout expired). `ordered()` yields entries in the
 * order the batcher should consider them.
 */
export class PriorityQueue<T> {
  readonly #levels: { punctual: QueueEntry<T>[]; delayed: QueueEntry<T>[] }[];
  readonly #policies: LevelPolicy[];
  readonly #defaultLevel: number;
  #size = 0;

  /** `policies[i]` is level i+1's policy; `defaultLevel` serves requests without a priority. */
  constructor(policies: LevelPolicy[], defaultLevel: number) {
    if (policies.length === 0) throw new Error("a queue needs at least one level");
    this.#policies = policies;
    this.#defaultLevel = defaultLevel;
    this.#levels = policies.map(() => ({ punctual: [], delayed: [] }));
  }

  get size(): number {
    return this.#size;
  }

  /** The level a request with this priority joins: 0, absent or beyond the levels → the default (Triton). */
  levelFor(priority: number | undefined): number {
    return priority && priority <= this.#policies.length ? priority : this.#defaultLevel;
  }

  policy(level: number): LevelPolicy {
    return this.#policies[level - 1]!;
  }

  /** True when the level already holds `maxQueueSize` entries. */
  isFull(level: number): boolean {
    const { maxQueueSize } = this.policy(level);
    const queue = this.#levels[level - 1]!;
    return maxQueueSize > 0 && queue.punctual.length + queue.delayed.length >= maxQueueSize;
  }

  push(entry: QueueEntry<T>): void {
    this.#levels[entry.level - 1]!.punctual.push(entry);
    this.#size++;
  }

  /** Removes an entry wherever it is; false when it was no longer queued. */
  remove(entry: QueueEntry<T>): boolean {
    const queue = this.#levels[entry.level - 1]!;
    const list = entry.delayed ? queue.delayed : queue.punctual;
    const i = list.indexOf(entry);
    if (i < 0) return false;
    list.splice(i, 1);
    this.#size--;
    return true;
  }

  /** Moves an entry whose DELAY timeout expired behind the punctual entries of its level. */
  delay(entry: QueueEntry<T>): void {
    if (entry.delayed || !this.remove(entry)) return;
    entry.delayed = true;
    this.#levels[entry.level - 1]!.delayed.push(entry);
    this.#size++;
  }

  /** Entries in service order: level 1 punctual, level 1 delayed, level 2 punctual, … */
  *ordered(): Generator<QueueEntry<T>> {
    for (const { punctual, delayed } of this.#levels) {
      yield* punctual;
      yield* delayed;
    }
  }
}

/** A level's timeout, shortened by the request's own where the level allows overrides (0: none). */
export function effectiveTimeout(policy: LevelPolicy, requestedMs: number | undefined): number {
  if (!policy.allowTimeoutOverride || !requestedMs || requestedMs <= 0) return policy.defaultTimeoutMs;
  return policy.defaultTimeoutMs > 0 ? Math.min(policy.defaultTimeoutMs, requestedMs) : requestedMs;
}
