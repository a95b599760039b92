// The sequence batcher's decisions as pure data (the batcher runs them): which sequences' next
// requests form the next execution, and when a partial one should wait for more.

/** A sequence as the planner sees it. */
export interface PlannedSequence {
  key: string;
  /** Holds a batch slot (direct) or is a candidate (oldest); others wait in the backlog. */
  placed: boolean;
  /** Its previous request is executing: its next one must wait for the state it leaves. */
  busy: boolean;
  /** Clock time its oldest queued request arrived; undefined when none is queued. */
  headSince?: number;
  /** Its oldest queued request's shape key: only requests of one shape share an execution. */
  headShape?: string;
}

export interface SequencePolicy {
  /** Rows in one execution (one per sequence). */
  maxBatchSize: number;
  /** How long the oldest ready request may wait for a fuller execution (ms); 0: at once. */
  maxQueueDelayMs: number;
  /** Direct: dispatch before the delay once this share of the batch is ready (Triton's minimum_slot_utilization). */
  minimumUtilization: number;
  /** Oldest: sizes that leave at once when formed. */
  preferredBatchSizes: readonly number[];
}

/** What to do now: run these sequences' heads, wait until a time (for more than `partial`), or nothing. */
export type SequenceDecision = { run: string[] } | { waitUntil: number; partial: string[] } | { idle: true };

/**
 * The next execution: the ready sequences (placed, not busy, a request queued), oldest head first,
 * those sharing the oldest one's shape, up to `maxBatchSize` — never two requests of one sequence.
 * It leaves at once when full, at a preferred size, at the minimum utilization, with no delay
 * configured, or once the oldest head has waited the delay; otherwise the planner says when to look again.
 */
export function planSequences(sequences: Iterable<PlannedSequence>, policy: SequencePolicy, now: number): SequenceDecision {
  const ready: PlannedSequence[] = [];
  for (const s of sequences) if (s.placed && !s.busy && s.headSince !== undefined) ready.push(s);
  if (ready.length === 0) return { idle: true };
  ready.sort((a, b) => a.headSince! - b.headSince!);
  const shape = ready[0]!.headShape;
  const batch = ready.filter((s) => s.headShape === shape).slice(0, policy.maxBatchSize);
  const run = { run: batch.map((s) => s.key) };
  if (batch.length >= policy.maxBatchSize || policy.maxQueueDelayMs <= 0) return run;
  if (policy.preferredBatchSizes.includes(batch.length)) return run;
  if (policy.minimumUtilization > 0 && batch.length >= policy.minimumUtilization * policy.maxBatchSize) return run;
  const due = ready[0]!.headSince! + policy.maxQueueDelayMs;
  return now >= due ? run : { waitUntil: due, partial: run.run };
}
