import type { DispatchReason } from "../scheduler-observer.ts";
import { missesDeadline, planBatch } from "./adaptive-law.ts";

// The dynamic batcher's decisions as pure functions, vLLM v1-style: the queue's state in, a plan
// out (which requests leave, why, or until when to wait). dynamic-batcher.ts gathers the state,
// applies the plan and owns the clock, the timers and the instances; these never touch them.

/** A queued request as the planner sees it. */
export interface PlannedRequest {
  batchSize: number;
  shapeKey: string;
  enqueuedAt: number;
}

/**
 * The longest run of `ordered` (service order: level, then arrival) that shares the first one's
 * shape key and fits `maxBatchSize` rows; the first that cannot join ends it, so nothing behind it
 * overtakes it. Never empty when `ordered` is not: a request larger than the limit leaves alone.
 */
export function formBatch<T extends PlannedRequest>(ordered: Iterable<T>, maxBatchSize: number): T[] {
  const formed: T[] = [];
  let rows = 0;
  for (const entry of ordered) {
    if (formed.length > 0 && (entry.shapeKey !== formed[0]!.shapeKey || rows + entry.batchSize > maxBatchSize)) break;
    formed.push(entry);
    rows += entry.batchSize;
  }
  return formed;
}

/** Everything a dispatch decision depends on, gathered by the batcher at one moment. */
export interface DispatchState {
  now: number;
  /** Row sizes and arrival times of the formed batch (`formBatch`), in order. */
  formed: readonly PlannedRequest[];
  /** Requests queued in all (more than formed: the next one cannot join). */
  queued: number;
  maxBatchSize: number;
  preferredBatchSizes: readonly number[];
  /** The fixed delay (ms), and with a latency target also the law's cap when above 0. */
  queueDelayMs: number;
  /** With a latency target: the adaptive law's inputs (adaptive-law.ts), read only where the decision needs them. */
  adaptive?: () => AdaptiveInputs;
  /** Whether another request can still arrive (`Arrivals.mayArrive`; undefined: unknown), read only where it matters. */
  mayArrive: () => boolean | undefined;
  /** Whether a wait is already under way (it began on an earlier plan). */
  waiting: boolean;
  /** Whether waits have been paying lately (ArrivalOutlook), asked only before a wait begins. */
  worthWaiting: () => boolean;
}

export interface AdaptiveInputs {
  targetMs: number;
  /** The fitted execution cost `a·n + b` ms (undefined before the first execution). */
  cost?: { a: number; b: number };
  turnMs?: number;
  gapMs?: number;
  /** When the next request is expected, where the server predicts it. */
  expectedAt?: number;
  /** How late the batcher's timer fires lately, weighed only with `expectedAt`. */
  latenessMs?: number;
}

/** What to do now: dispatch the first `count` formed requests for `reason`, or wait until `untilMs`. */
export type DispatchPlan =
  | { dispatch: true; count: number; reason: DispatchReason }
  | { dispatch: false; untilMs: number; /** the wait ends on the timer alone, without polling */ coarse: boolean };

/**
 * Triton's dynamic-batching decision. Dispatch at once when the batch is full or has the largest
 * preferred size; when the next request cannot join (`blocked`); otherwise when the oldest request
 * has waited the queue delay (at once when it is 0) — or, with a latency target, when the
 * adaptive law says so — taking the largest preferred size formed if any, else everything formed.
 * A wait starts only while waits have been paying and another request can still arrive.
 */
export function planDispatch(s: DispatchState): DispatchPlan {
  const { formed, maxBatchSize, preferredBatchSizes } = s;
  let rows = 0;
  const sums: number[] = [];
  for (const e of formed) sums.push((rows += e.batchSize));
  if (rows >= maxBatchSize) return { dispatch: true, count: formed.length, reason: "full" };
  let best: number | undefined;
  for (const p of preferredBatchSizes) if (sums.includes(p) && (best === undefined || p > best)) best = p;
  const take = (reason: DispatchReason): DispatchPlan => ({ dispatch: true, count: best === undefined ? formed.length : sums.indexOf(best) + 1, reason });
  if (best !== undefined && best === Math.max(...preferredBatchSizes)) return take("preferred");
  if (formed.length < s.queued) return take("blocked"); // the next request cannot join: waiting gains nothing
  const oldestAt = formed[0]!.enqueuedAt;
  let untilMs: number;
  let coarse = false;
  if (s.adaptive) {
    if (s.mayArrive() === false) return take("no_arrivals");
    const { targetMs, cost, turnMs, gapMs, expectedAt, latenessMs } = s.adaptive();
    const decision = planBatch({ now: s.now, rows, oldestAt, newestAt: formed.at(-1)!.enqueuedAt, targetMs, capMs: s.queueDelayMs > 0 ? s.queueDelayMs : undefined, cost, turnMs, gapMs, expectedAt, latenessMs });
    if (decision.dispatch) return take("law");
    untilMs = decision.untilMs;
    coarse = expectedAt !== undefined;
  } else {
    untilMs = oldestAt + s.queueDelayMs;
    if (s.queueDelayMs <= 0) return take("at_once");
    if (s.now >= untilMs) return take("delay");
    if (s.mayArrive() === false) return take("no_arrivals");
  }
  if (!s.waiting && !s.worthWaiting()) return take("not_paying");
  return { dispatch: false, untilMs, coarse };
}

/**
 * With a latency target: which requests of a batch about to leave would finish past their
 * deadline (the target, or their queue timeout if sooner) given the batch's predicted cost; the
 * batcher rejects those (503). `readyAt`: when the batch could first have left — a request that
 * would have met its deadline then runs, since the hold was the batcher's choice, not overload.
 */
export function missedDeadlines(batch: readonly PlannedRequest[], o: { now: number; readyAt?: number; costMs: number; targetMs: number; timeoutMs: (i: number) => number }): boolean[] {
  return batch.map((entry, i) => {
    const timeoutMs = o.timeoutMs(i);
    const deadlineMs = timeoutMs > 0 ? Math.min(timeoutMs, o.targetMs) : o.targetMs;
    return missesDeadline(o.readyAt ?? o.now, entry.enqueuedAt, deadlineMs, o.costMs);
  });
}
