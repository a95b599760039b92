import type { Clock } from "../core/mod.ts";
import type { RateLimitConfig } from "../config/mod.ts";

export interface RateLimiterOptions {
  /** Sustained rate: tokens added per second. */
  requestsPerSecond: number;
  /** Bucket size: how many requests may arrive at once after a quiet period. */
  burst: number;
  clock: Clock;
  /** Most client keys remembered; past it the least recently seen key starts over with a full bucket. */
  maxKeys?: number;
}

/** Whether one request may pass, and if not, when the next one could (`total`: the shared bucket refused). */
export type Admission = { ok: true } | { ok: false; retryAfterMs: number; total?: boolean };

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per client key (one shared bucket when requests carry no key): `burst` requests
 * pass at once, then `requestsPerSecond` on average. Buckets refill lazily when asked, so an idle
 * limiter costs nothing and needs no timer; a full bucket is the same as a forgotten one, which is
 * what lets the key map stay bounded without changing anyone's answer.
 */
export class RateLimiter {
  readonly requestsPerSecond: number;
  readonly burst: number;
  readonly #clock: Clock;
  readonly #maxKeys: number;
  /** In least-recently-seen order (a Map keeps insertion order; a hit re-inserts). */
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: RateLimiterOptions) {
    this.requestsPerSecond = options.requestsPerSecond;
    this.burst = options.burst;
    this.#clock = options.clock;
    this.#maxKeys = options.maxKeys ?? 10_000;
  }

  /** Takes one token from `key`'s bucket if it has one. */
  take(key = ""): Admission {
    const now = this.#clock.now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) * this.requestsPerSecond) / 1000);
    bucket.at = now;
    this.#buckets.delete(key);
    if (this.#buckets.size >= this.#maxKeys) this.#forget(now);
    this.#buckets.set(key, bucket);
    // Refills add fractions; without the tolerance, 5 × 0.2 tokens can sum to 0.999… and refuse.
    if (bucket.tokens >= 1 - 1e-9) {
      bucket.tokens = Math.max(0, bucket.tokens - 1);
      return { ok: true };
    }
    return { ok: false, retryAfterMs: ((1 - bucket.tokens) * 1000) / this.requestsPerSecond };
  }

  /** Keys remembered now (for tests of the bound). */
  get size(): number {
    return this.#buckets.size;
  }

  /**
   * Makes room for one more key: drops refilled buckets, then least recently seen ones down to
   * 90 % of the bound (the slack makes a flood of new keys scan the map once per tenth of the
   * bound, not once per key).
   */
  #forget(now: number): void {
    for (const [key, b] of this.#buckets) {
      if (b.tokens + ((now - b.at) * this.requestsPerSecond) / 1000 >= this.burst) this.#buckets.delete(key);
    }
    const keep = Math.min(this.#maxKeys - 1, Math.floor(this.#maxKeys * 0.9));
    for (const key of this.#buckets.keys()) {
      if (this.#buckets.size <= keep) break;
      this.#buckets.delete(key);
    }
  }
}

/**
 * A function's `rate_limit`: a bucket per `key_header` value, then — with key_header — one bucket
 * over every key (`total_requests_per_second`), so a client that invents keys cannot multiply the
 * rate. The per-key bucket is asked first: a key over its own limit does not spend the total that
 * other keys share.
 */
export class KeyedRateLimiter {
  readonly #perKey: RateLimiter;
  readonly #total?: RateLimiter;

  constructor(limit: RateLimitConfig, clock: Clock) {
    this.#perKey = new RateLimiter({ requestsPerSecond: limit.requests_per_second, burst: limit.burst, clock });
    if (limit.key_header && limit.total_requests_per_second !== undefined) {
      this.#total = new RateLimiter({ requestsPerSecond: limit.total_requests_per_second, burst: limit.total_burst ?? limit.burst, clock });
    }
  }

  take(key = ""): Admission {
    const own = this.#perKey.take(key);
    if (!own.ok || !this.#total) return own;
    const total = this.#total.take();
    return total.ok ? total : { ...total, total: true };
  }
}
