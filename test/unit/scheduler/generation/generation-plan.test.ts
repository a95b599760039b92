import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BlockPool } from "../../../../runtime/scheduler/generation/block-pool.ts";
import { planIteration } from "../../../../runtime/scheduler/generation/generation-plan.ts";
import type { PlanState, PlannedSeq } from "../../../../runtime/scheduler/generation/generation-plan.ts";

const seq = (id: number, fields: Partial<PlannedSeq> = {}): PlannedSeq => ({ id, tokens: 10, computed: 0, blocks: 0, owned: 0, priority: 1, arrival: id, ...fields });
const base: PlanState = { running: [], waiting: [], available: 100, blockSize: 4, maxNumSeqs: 8, maxBatchedTokens: 32, mode: "continuous" };

describe("planIteration", () => {
  it("gives running decodes their step first, then admits waiting prompts within the token budget, chunking the last", () => {
    const plan = planIteration({
      ...base,
      running: [seq(1, { tokens: 9, computed: 8, blocks: 2, owned: 2 }), seq(2, { tokens: 13, computed: 12, blocks: 3, owned: 3 })],
      waiting: [seq(3, { tokens: 20 }), seq(4, { tokens: 50 })],
    });
    expect(plan.steps).toEqual([
      { id: 1, from: 8, tokens: 1, newBlocks: 1, cachedBlocks: 0 },
      { id: 2, from: 12, tokens: 1, newBlocks: 1, cachedBlocks: 0 },
      { id: 3, from: 0, tokens: 20, newBlocks: 5, cachedBlocks: 0 },
      // 32 - 22 = 10 tokens of the long prompt this iteration: the rest in later ones.
      { id: 4, from: 0, tokens: 10, newBlocks: 3, cachedBlocks: 0 },
    ]);
    expect(plan.admitted).toEqual([3, 4]);
  });

  it("stops admitting at max_num_seqs and at the first prompt that does not fit, first come first served", () => {
    expect(planIteration({ ...base, maxNumSeqs: 2, running: [seq(1, { tokens: 5, computed: 4, blocks: 1, owned: 1 })], waiting: [seq(2), seq(3)] }).admitted).toEqual([2]);
    expect(planIteration({ ...base, available: 3, waiting: [seq(2, { tokens: 16 }), seq(3, { tokens: 4 })] }).admitted).toEqual([]);
  });

  it("preempts the newest (then least important) running sequence when blocks run out, and admits nothing that iteration", () => {
    const running = [seq(1, { tokens: 9, computed: 8, blocks: 2, owned: 2 }), seq(2, { tokens: 9, computed: 8, blocks: 2, owned: 2 }), seq(3, { tokens: 9, computed: 8, blocks: 2, owned: 2, priority: 2, arrival: 0 })];
    const plan = planIteration({ ...base, available: 0, running, waiting: [seq(9)] });
    // Sequence 3 is the least important: taken first, its 2 blocks serve 1 and 2.
    expect(plan.preempted).toEqual([3]);
    expect(plan.steps.map((s) => s.id)).toEqual([1, 2]);
    expect(plan.admitted).toEqual([]);
    // With nothing else to take, a sequence preempts itself.
    expect(planIteration({ ...base, available: 0, running: [seq(1, { tokens: 9, computed: 8, blocks: 2, owned: 2 })] })).toMatchObject({ preempted: [1], steps: [] });
  });

  it("a prefix hit starts the prompt after its cached blocks, never at its very end", () => {
    const plan = planIteration({ ...base, waiting: [seq(1, { tokens: 12, cached: { blocks: 3, idle: 3 } })] });
    // 12 tokens = 3 full blocks, but the last token must be computed for its logits: 2 blocks reused.
    expect(plan.steps).toEqual([{ id: 1, from: 8, tokens: 4, newBlocks: 1, cachedBlocks: 2 }]);
  });

  it("static (request-level) batching admits only when nothing runs", () => {
    expect(planIteration({ ...base, mode: "static", running: [seq(1, { tokens: 5, computed: 4, blocks: 1, owned: 1 })], waiting: [seq(2)] }).admitted).toEqual([]);
    expect(planIteration({ ...base, mode: "static", waiting: [seq(2), seq(3)] }).admitted).toEqual([2, 3]);
  });

  it("over random workloads: blocks held always equal the sum of the block tables, budgets hold, everyone finishes", () => {
    const workload = fc.record({
      blockSize: fc.integer({ min: 1, max: 8 }),
      blocks: fc.integer({ min: 8, max: 64 }),
      maxNumSeqs: fc.integer({ min: 1, max: 6 }),
      maxBatchedTokens: fc.integer({ min: 1, max: 40 }),
      mode: fc.constantFrom("continuous" as const, "static" as const),
      requests: fc.array(fc.record({ prompt: fc.integer({ min: 1, max: 30 }), output: fc.integer({ min: 1, max: 30 }), shared: fc.boolean(), priority: fc.integer({ min: 1, max: 2 }) }), { minLength: 1, maxLength: 12 }),
    });
    fc.assert(
      fc.property(workload, (w) => {
        const pool = new BlockPool(w.blocks, w.blockSize);
        type Live = PlannedSeq & { ids: number[]; table: number[]; target: number };
        // Requests that fit the pool alone (the scheduler refuses others with 400); half share a prefix.
        const waiting: Live[] = w.requests
          .filter((r) => Math.ceil((r.prompt + r.output) / w.blockSize) <= w.blocks)
          .map((r, i) => {
            const ids = Array.from({ length: r.prompt }, (_, k) => (r.shared ? k : 1000 * (i + 1) + k));
            return { ...seq(i, { tokens: r.prompt, priority: r.priority }), ids, table: [], target: r.prompt + r.output };
          });
        const running: Live[] = [];
        let iterations = 0;
        while (waiting.length + running.length > 0) {
          if (++iterations > 5000) throw new Error("no progress");
          for (const s of [...running, ...waiting]) {
            s.blocks = s.table.length;
            s.owned = s.table.filter((b) => pool.holders(b) === 1).length;
            if (waiting.includes(s)) {
              const hit = pool.lookup(s.ids, Math.floor((s.ids.length - 1) / w.blockSize));
              s.cached = { blocks: hit.length, idle: pool.idleAmong(hit) };
            }
          }
          waiting.sort((a, b) => a.priority - b.priority || a.arrival - b.arrival);
          const plan = planIteration({ running, waiting, available: pool.available, blockSize: w.blockSize, maxNumSeqs: w.maxNumSeqs, maxBatchedTokens: w.maxBatchedTokens, mode: w.mode });
          for (const id of plan.preempted) {
            const s = running.find((r) => r.id === id)!;
            pool.release(s.table);
            s.table = [];
            s.computed = 0;
            running.splice(running.indexOf(s), 1);
            waiting.push(s);
          }
          expect(plan.steps.reduce((n, s) => n + s.tokens, 0)).toBeLessThanOrEqual(w.maxBatchedTokens);
          for (const step of plan.steps) {
            let s = running.find((r) => r.id === step.id);
            if (!s) {
              s = waiting.find((r) => r.id === step.id)!;
              waiting.splice(waiting.indexOf(s), 1);
              running.push(s);
              const hit = pool.lookup(s.ids, step.cachedBlocks);
              pool.claim(hit);
              s.table.push(...hit);
            }
            s.table.push(...pool.allocate(step.newBlocks));
            s.computed = step.from + step.tokens;
            for (let b = 0; b < Math.floor(s.computed / w.blockSize); b++) pool.register(s.table, b, s.ids);
            if (s.computed === s.ids.length) s.ids.push(7), (s.tokens = s.ids.length);
          }
          expect(running.length).toBeLessThanOrEqual(w.maxNumSeqs);
          for (const s of [...running]) {
            if (s.ids.length >= s.target) {
              pool.release(s.table);
              s.table = [];
              running.splice(running.indexOf(s), 1);
            }
          }
          const tables = [...running, ...waiting].reduce((n, s) => n + s.table.length, 0);
          expect(pool.references).toBe(tables);
          expect(pool.used).toBeLessThanOrEqual(tables);
        }
        expect(pool.used).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
