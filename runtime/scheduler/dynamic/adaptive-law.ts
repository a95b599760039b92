/** What the adaptive law reads when an instance is free and a batch could leave now. */
export interface BatchOutlook {
  now: number;
  /** Rows in the batch that would leave now. */
  rows: number;
  /** Enqueue time of its oldest request, and of its newest (the last time the batch grew). */
  oldestAt: number;
  newestAt: number;
  targetMs: number;
  /** max_queue_delay_microseconds in ms when set (> 0): a ceiling on any wait. */
  capMs?: number;
  /** The fitted execution cost, `a·n + b` ms (undefined before the first execution). */
  cost?: { a: number; b: number };
  /**
   * What an execution waits before it computes, whatever its size (an event-loop instance's wait
   * for its turn of the loop), ms: it delays every answer, so deadlines count it, but a bigger
   * batch does not save it, so the wait-or-go rule does not.
   */
  turnMs?: number;
  /** Mean gap between arrivals, ms. */
  gapMs?: number;
  /** How late the timer that ends a wait may fire, ms: kept out of the target's budget. */
  latenessMs?: number;
  /**
   * When the next arrival is expected (clock ms; Infinity: none soon), where the server knows its
   * clients send again once answered (`Arrivals.expectedAt`, a closed loop): the law then weighs
   * that instead of the mean gap.
   */
  expectedAt?: number;
}

/** Dispatch now, or wait until clock time `untilMs` unless something arrives first. */
export type BatchDecision = { dispatch: true } | { dispatch: false; untilMs: number };

/** Share of the target kept back for work outside the scheduler (decode, encode, answer) and noise. */
export const TARGET_MARGIN = 0.1;

/**
 * The adaptive batching law (`dynamic_batching.target_latency_ms`). With `n` rows formed and an
 * instance free, waiting time `τ` for one more request raises throughput only if
 * `(n+1) / (τ + cost(n+1)) > n / cost(n)`, which with `cost(n) = a·n + b` reduces to `τ < b / n`:
 * the wait imposed on the `n` waiting rows must be less than the fixed cost `b` the newcomer saves
 * by sharing this execution instead of paying its own. So, for arrivals nothing predicts (an open
 * loop: requests come whether or not earlier ones were answered):
 * - dispatch at once when the mean gap between arrivals is already longer than `b / n`;
 * - otherwise wait, but at most `b / n` past the last arrival (if nobody came by then, the wait
 *   stopped paying).
 * In a closed loop (each client sends again once answered, `expectedAt` known) that reasoning
 * misleads: the mean gap spans the executions during which nobody can send, and a client that
 * misses this batch is not lost to it: it sends into a later execution, which pays `b` again, and
 * the clients fall into groups that keep apart, each paying `b` every round (8 clients of mlp
 * formed groups of 5 and 3 that way). So the batch waits for every client expected back within
 * the target, each arrival re-planning, until none can come (the batcher's `no_arrivals`) or the
 * batch is full; it leaves at once when the next is due too late (or none is expected: Infinity),
 * and when the one due is overdue by more than `b` (a client that paused; the server stops
 * expecting it altogether after a while). Either way, never past the point where the oldest
 * request would miss the target (`oldest + target·(1 − margin) − cost(n+1) − turn − lateness`,
 * `turn` being what an execution waits before it computes and `lateness` how late the timer that
 * ends the wait may fire), and never past max_queue_delay when set.
 * Each arrival re-plans. Before the first execution there is no cost to weigh: dispatch.
 */
export function planBatch(o: BatchOutlook): BatchDecision {
  if (!o.cost || o.rows <= 0) return { dispatch: true };
  const { a, b } = o.cost;
  const budgetEnd = o.oldestAt + o.targetMs * (1 - TARGET_MARGIN) - (a * (o.rows + 1) + b) - (o.turnMs ?? 0) - (o.latenessMs ?? 0);
  const capEnd = o.capMs ? o.oldestAt + o.capMs : Infinity;
  let horizon: number;
  if (o.expectedAt !== undefined) {
    if (o.expectedAt >= Math.min(budgetEnd, capEnd)) return { dispatch: true };
    horizon = o.expectedAt + b;
  } else {
    const pays = b / o.rows;
    if (o.gapMs !== undefined && o.gapMs >= pays) return { dispatch: true };
    horizon = o.newestAt + pays;
  }
  const untilMs = Math.min(horizon, budgetEnd, capEnd);
  return untilMs > o.now ? { dispatch: false, untilMs } : { dispatch: true };
}

/**
 * Whether a request queued at `enqueuedAt` can no longer meet its deadline (`deadlineMs` after
 * it queued) if it leaves now in a batch expected to take `costMs`: then it is shed (503) rather
 * than run late. Only a request that waiting made late is shed: where the execution alone takes
 * longer than the deadline (a slow model, a cold first run) shedding would refuse everything and
 * the cost model would never see the executions that correct it, so it runs.
 */
export function missesDeadline(now: number, enqueuedAt: number, deadlineMs: number, costMs: number): boolean {
  return deadlineMs > 0 && costMs <= deadlineMs && now + costMs > enqueuedAt + deadlineMs;
}
