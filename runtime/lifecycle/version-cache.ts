/**
 * One version's use of the server's response cache (`response_cache`): whole encoded replies by
 * the request's bytes, and scheduler results by the inputs and parameters, each hit and miss
 * counted in the version's statistics as Triton counts them.
 */
import type { Clock, InferRequest } from "../core/mod.ts";
import type { CachedReply, ResponseCache } from "../cache/mod.ts";
import type { ModelStats } from "../metrics/mod.ts";
import type { ScheduledRequest, ScheduledResult } from "../scheduler/mod.ts";

export class VersionCache {
  readonly #store: ResponseCache;
  readonly #scope: string;
  readonly #stats: ModelStats;
  readonly #clock: Clock;
  /** An ensemble's conditions and a handler may read any parameter (priority too): all are in their keys. */
  readonly #everyParameter: boolean;

  constructor(cache: { store: ResponseCache; scope: string }, stats: ModelStats, clock: Clock, everyParameter: boolean) {
    this.#store = cache.store;
    this.#scope = cache.scope;
    this.#stats = stats;
    this.#clock = clock;
    this.#everyParameter = everyParameter;
  }

  /** The encoded reply to a request of exactly these bytes, counted as a hit and a success; else the key to keep its reply under (none without a native digest). */
  reply(framing: string, body: Uint8Array): { key?: string; reply?: CachedReply } {
    const started = this.#clock.now();
    const key = this.#store.replyKey(this.#scope, framing, body);
    const reply = key === undefined ? undefined : this.#store.getReply(key);
    if (!reply) return { key };
    const ms = this.#clock.now() - started;
    this.#stats.cacheHit(ms);
    this.#stats.succeeded(ms);
    return { reply };
  }

  keepReply(key: string, reply: CachedReply): void {
    this.#store.setReply(key, reply);
  }

  /**
   * The result from the cache, or from `run` and then kept there. Only results that succeeded are
   * kept (a failure throws past the insert).
   */
  async result(scheduled: ScheduledRequest, request: InferRequest, run: () => Promise<ScheduledResult>): Promise<ScheduledResult> {
    const started = this.#clock.now();
    // A cached result serves later requests for any of the outputs: compute them all.
    delete scheduled.outputs;
    const keyed = this.#store.key(this.#scope, scheduled.feeds, request.parameters, { everyParameter: this.#everyParameter });
    const key = typeof keyed === "string" ? keyed : await keyed; // a native digest is synchronous: no turn
    const hit = this.#store.get(key);
    if (hit) {
      this.#stats.cacheHit(this.#clock.now() - started);
      return hit;
    }
    const lookupMs = this.#clock.now() - started;
    const result = await run();
    const inserting = this.#clock.now();
    this.#store.set(key, result);
    this.#stats.cacheMiss(lookupMs + this.#clock.now() - inserting);
    return result;
  }
}
