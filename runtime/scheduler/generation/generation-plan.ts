/**
 * One iteration of continuous (iteration-level) batching, planned on data: state in, plan out,
 * after vLLM's v1 scheduler. Running sequences go first (a decode step each, or the next chunk of a
 * prompt), within a token budget; where their next tokens need blocks the pool lacks, the
 * least important, newest running sequence is preempted (its blocks freed, recomputed later);
 * then, when nothing was preempted, waiting sequences are admitted in queue order up to
 * `maxNumSeqs` and the budget, a long prompt prefilled in chunks so running streams never stall.
 * `static` is request-level batching for comparison: a batch is admitted only when none runs.
 */

/** One sequence as the planner sees it. */
export interface PlannedSeq {
  id: number;
  /** Tokens known: the prompt plus what was generated (all of them are recomputed after a preemption). */
  tokens: number;
  /** Tokens whose keys and values are in the cache (0 for a waiting sequence). */
  computed: number;
  /** Its block table's length. */
  blocks: number;
  /** Blocks of its table only it holds: what preempting it gives back. */
  owned: number;
  /** 1 = most important; larger is less. */
  priority: number;
  /** Arrival order (smaller arrived first). */
  arrival: number;
  /** A waiting sequence's prefix-cache hit: cached full blocks, and how many of them nobody holds now. */
  cached?: { blocks: number; idle: number };
}

export interface PlanState {
  /** In admission order. */
  running: readonly PlannedSeq[];
  /** In queue order (priority, then arrival). */
  waiting: readonly PlannedSeq[];
  /** Blocks that can be taken now. */
  available: number;
  blockSize: number;
  maxNumSeqs: number;
  maxBatchedTokens: number;
  mode: "continuous" | "static";
}

/** One sequence's share of the iteration: `tokens` new tokens from position `from`. */
export interface PlannedStep {
  id: number;
  from: number;
  tokens: number;
  /** Fresh blocks it takes before the step. */
  newBlocks: number;
  /** Cached blocks it claims (an admitted sequence's prefix hit). */
  cachedBlocks: number;
}

export interface IterationPlan {
  steps: PlannedStep[];
  /** Running sequences to preempt first (their blocks freed; they wait again, recomputed from scratch). */
  preempted: number[];
  /** Waiting sequences that start running with this iteration (each has a step). */
  admitted: number[];
}

const blocksFor = (tokens: number, blockSize: number) => Math.ceil(tokens / blockSize);

/** Whether `a` is the better victim: less important, then newer. */
function worse(a: PlannedSeq, b: PlannedSeq): boolean {
  return a.priority !== b.priority ? a.priority > b.priority : a.arrival > b.arrival;
}

export function planIteration(state: PlanState): IterationPlan {
  const plan: IterationPlan = { steps: [], preempted: [], admitted: [] };
  let budget = state.maxBatchedTokens;
  let available = state.available;
  const { blockSize } = state;
  const pending = [...state.running];
  const preempted = new Set<number>();
  while (pending.length > 0 && budget > 0) {
    const seq = pending.shift()!;
    const tokens = Math.min(seq.tokens - seq.computed, budget);
    if (tokens <= 0) continue;
    const needed = Math.max(0, blocksFor(seq.computed + tokens, blockSize) - seq.blocks);
    let fits = true;
    while (available < needed) {
      // The victim: the least important, newest sequence not yet given a step this iteration.
      let victim = -1;
      for (let i = 0; i < pending.length; i++) if (victim < 0 || worse(pending[i]!, pending[victim]!)) victim = i;
      if (victim < 0 || worse(seq, pending[victim]!)) {
        // Nothing left to take from but itself.
        preempted.add(seq.id);
        available += seq.owned;
        fits = false;
        break;
      }
      const [taken] = pending.splice(victim, 1);
      preempted.add(taken!.id);
      available += taken!.owned;
    }
    if (!fits) continue;
    available -= needed;
    budget -= tokens;
    plan.steps.push({ id: seq.id, from: seq.computed, tokens, newBlocks: needed, cachedBlocks: 0 });
  }
  plan.preempted = [...preempted];
  // vLLM admits nothing in an iteration that had to preempt: memory is short.
  const admitting = preempted.size === 0 && (state.mode === "continuous" || state.running.length === 0);
  if (!admitting) return plan;
  let seats = state.maxNumSeqs - (state.running.length - preempted.size);
  for (const seq of state.waiting) {
    if (seats <= 0 || budget <= 0) break;
    // A full hit still computes the last prompt token: its logits choose the first new one.
    const cachedBlocks = Math.min(seq.cached?.blocks ?? 0, Math.floor((seq.tokens - 1) / blockSize));
    const idle = Math.min(seq.cached?.idle ?? 0, cachedBlocks);
    const from = cachedBlocks * blockSize;
    const tokens = Math.min(seq.tokens - from, budget);
    const needed = blocksFor(from + tokens, blockSize) - cachedBlocks;
    // First come, first served: a sequence that does not fit keeps those behind it waiting.
    if (available - idle < needed) break;
    available -= idle + needed;
    budget -= tokens;
    seats--;
    plan.admitted.push(seq.id);
    plan.steps.push({ id: seq.id, from, tokens, newBlocks: needed, cachedBlocks });
  }
  return plan;
}
