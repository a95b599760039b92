import type { PathProblem } from "./_describe-issues.ts";
import type { RawConfig } from "./function-schema.ts";

/**
 * What an ensemble's own config must satisfy, before any other function is looked at (Triton's
 * rules): declared inputs and outputs (there is no model to take them from), steps, no instances,
 * batcher, warm-up or handler of its own; every tensor a step reads is an ensemble input or
 * produced by a step, every tensor is produced once, every ensemble output is produced, and the
 * steps form no cycle.
 */
export function ensembleProblems(config: RawConfig): PathProblem[] {
  const problems: PathProblem[] = [];
  const scheduling = config.ensemble_scheduling;
  if (!scheduling) return [{ path: ["platform"], problem: "an ensemble needs ensemble_scheduling with its steps" }];
  if (config.input.length === 0) problems.push({ path: ["input"], problem: "an ensemble has no model to take inputs from; list them" });
  if (config.output.length === 0) problems.push({ path: ["output"], problem: "an ensemble has no model to take outputs from; list them" });
  if (config.backend && config.backend !== ("" as string)) problems.push({ path: ["backend"], problem: "an ensemble runs other functions; remove backend" });
  for (const key of ["instance_group", "model_warmup"] as const) {
    if (config[key].length > 0) problems.push({ path: [key], problem: `an ensemble has no ${key === "instance_group" ? "instances" : "model to warm up"} of its own; its steps' functions have theirs` });
  }
  if (config.dynamic_batching) problems.push({ path: ["dynamic_batching"], problem: "an ensemble has no batcher of its own; each step is batched by its function's" });
  if (config.handler) problems.push({ path: ["handler"], problem: "an ensemble's steps are functions; give the handler to one of them" });

  const inputs = new Set(config.input.map((t) => t.name));
  // Who produces each ensemble tensor: an ensemble input (-1) or a step.
  const producer = new Map<string, number>([...inputs].map((name) => [name, -1]));
  scheduling.step.forEach((step, i) => {
    for (const [output, tensor] of Object.entries(step.output_map)) {
      const first = producer.get(tensor);
      if (first !== undefined) {
        const by = first < 0 ? "it is an ensemble input" : `step ${first} produces it already`;
        problems.push({ path: ["ensemble_scheduling", "step", i, "output_map", output], problem: `tensor '${tensor}' is produced twice: ${by}` });
      } else {
        producer.set(tensor, i);
      }
    }
  });
  scheduling.step.forEach((step, i) => {
    if (Object.keys(step.input_map).length === 0) problems.push({ path: ["ensemble_scheduling", "step", i, "input_map"], problem: "a step needs at least one input" });
    for (const [input, tensor] of Object.entries(step.input_map)) {
      if (!producer.has(tensor)) problems.push({ path: ["ensemble_scheduling", "step", i, "input_map", input], problem: `tensor '${tensor}' is neither an ensemble input nor any step's output` });
    }
  });
  config.output.forEach((t, i) => {
    const by = producer.get(t.name);
    if (by === undefined) problems.push({ path: ["output", i, "name"], problem: `no step produces ensemble output '${t.name}' (map it in a step's output_map)` });
    else if (by < 0) problems.push({ path: ["output", i, "name"], problem: `'${t.name}' is an ensemble input; an output must come from a step` });
  });
  const cycle = findCycle(scheduling.step.map((step) => Object.values(step.input_map).map((t) => producer.get(t) ?? -1).filter((p) => p >= 0)));
  if (cycle) problems.push({ path: ["ensemble_scheduling", "step", cycle[0]!], problem: `steps ${cycle.join(" → ")} → ${cycle[0]} form a cycle: each waits for the next one's output` });
  return problems;
}

/** A cycle in the step graph (`needs[i]`: steps whose outputs step i reads), as its steps in data-flow order, or undefined. */
export function findCycle(needs: readonly number[][]): number[] | undefined {
  const state = needs.map(() => 0); // 0 unseen, 1 on the path, 2 done
  const path: number[] = [];
  const visit = (i: number): number[] | undefined => {
    if (state[i] === 2) return undefined;
    if (state[i] === 1) return path.slice(path.indexOf(i));
    state[i] = 1;
    path.push(i);
    for (const j of needs[i]!) {
      const found = visit(j);
      if (found) return found;
    }
    path.pop();
    state[i] = 2;
    return undefined;
  };
  for (let i = 0; i < needs.length; i++) {
    const found = visit(i);
    if (!found) continue;
    // In data-flow order (each step feeds the next), from the lowest-numbered step.
    const flow = found.reverse();
    const start = flow.indexOf(Math.min(...flow));
    return [...flow.slice(start), ...flow.slice(0, start)];
  }
  return undefined;
}
