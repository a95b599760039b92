import type { PathProblem } from "./_describe-issues.ts";
import type { RawConfig } from "./function-schema.ts";
import type { FunctionConfig, TensorConfig } from "./function-config.ts";
import { conditionTensors, parseCondition } from "./step-condition.ts";

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
  // What each step reads: its inputs and the tensors its condition looks at.
  const reads = scheduling.step.map((step, i) => {
    const tensors = Object.values(step.input_map);
    if (step.condition === undefined) return tensors;
    try {
      const tensorsRead = conditionTensors(parseCondition(step.condition));
      for (const t of tensorsRead) {
        if (!producer.has(t)) problems.push({ path: ["ensemble_scheduling", "step", i, "condition"], problem: `reads tensor '${t}', which is neither an ensemble input nor any step's output` });
      }
      return [...tensors, ...tensorsRead];
    } catch (error) {
      problems.push({ path: ["ensemble_scheduling", "step", i, "condition"], problem: `${(error as Error).message}` });
      return tensors;
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
  const cycle = findCycle(reads.map((tensors) => tensors.map((t) => producer.get(t) ?? -1).filter((p) => p >= 0)));
  if (cycle) problems.push({ path: ["ensemble_scheduling", "step", cycle[0]!], problem: `steps ${cycle.join(" → ")} → ${cycle[0]} form a cycle: each waits for the next one's output` });
  return problems;
}

/**
 * A cycle in the step graph (`needs[i]`: steps whose outputs step i reads), as its steps in
 * data-flow order, or undefined. Depth-first with a stack of its own: a chain of 20 000 steps
 * must not overflow the call stack.
 */
export function findCycle(needs: readonly number[][]): number[] | undefined {
  const state = needs.map(() => 0); // 0 unseen, 1 on the path, 2 done
  for (let root = 0; root < needs.length; root++) {
    if (state[root] !== 0) continue;
    const path: number[] = [root];
    const next: number[] = [0]; // per path entry: the index of the edge to follow next
    state[root] = 1;
    while (path.length > 0) {
      const i = path[path.length - 1]!;
      const edges = needs[i]!;
      const e = next[next.length - 1]!;
      if (e === edges.length) {
        state[i] = 2;
        path.pop();
        next.pop();
        continue;
      }
      next[next.length - 1] = e + 1;
      const j = edges[e]!;
      if (state[j] === 1) {
        // In data-flow order (each step feeds the next), from the lowest-numbered step.
        const flow = path.slice(path.indexOf(j)).reverse();
        let start = 0;
        for (let k = 1; k < flow.length; k++) if (flow[k]! < flow[start]!) start = k;
        return [...flow.slice(start), ...flow.slice(0, start)];
      }
      if (state[j] === 0) {
        state[j] = 1;
        path.push(j);
        next.push(0);
      }
    }
  }
  return undefined;
}

/**
 * How an ensemble's steps fit the functions they run (`functions[i]`: step i's effective config),
 * checked when the ensemble loads, since those functions' tensors may come from their models: every
 * mapped name exists, every required input is mapped, and each ensemble tensor has one datatype and
 * compatible dims wherever it is produced and read (-1 matches anything). A batching ensemble needs
 * functions that batch at least as much.
 */
export function ensembleWiringProblems(
  ensemble: Pick<FunctionConfig, "name" | "max_batch_size" | "input" | "output" | "ensemble_scheduling">,
  functions: readonly Pick<FunctionConfig, "name" | "max_batch_size" | "input" | "output">[],
): string[] {
  const problems: string[] = [];
  const steps = ensemble.ensemble_scheduling?.step ?? [];
  // Every place an ensemble tensor is declared: the ensemble's own inputs and outputs, each step's side of it.
  const seen = new Map<string, { where: string; data_type: string; dims: number[] }>();
  const agree = (tensor: string, where: string, t: Pick<TensorConfig, "data_type" | "dims">) => {
    const first = seen.get(tensor);
    if (!first) return void seen.set(tensor, { where, data_type: t.data_type, dims: [...t.dims] });
    if (first.data_type !== t.data_type) problems.push(`tensor '${tensor}' is ${first.data_type} at ${first.where} but ${t.data_type} at ${where}`);
    else if (!compatibleDims(first.dims, t.dims)) problems.push(`tensor '${tensor}' has dims [${first.dims.join(", ")}] at ${first.where} but [${t.dims.join(", ")}] at ${where}`);
  };
  for (const t of ensemble.input) agree(t.name, "the ensemble's input", t);
  for (const t of ensemble.output) agree(t.name, "the ensemble's output", t);
  steps.forEach((step, i) => {
    const fn = functions[i]!;
    const at = `step ${i} ('${step.model_name}')`;
    if (ensemble.max_batch_size > 0 && fn.max_batch_size < ensemble.max_batch_size) {
      problems.push(`${at}: '${fn.name}' batches up to ${fn.max_batch_size}, less than the ensemble's max_batch_size ${ensemble.max_batch_size}`);
    }
    // An ensemble without a batch dimension passes whole shapes: a step that batches takes and
    // gives its dims behind a batch dimension of any size (lines of an image, say), as in Triton.
    const whole = ensemble.max_batch_size === 0 && fn.max_batch_size > 0;
    const shaped = (t: TensorConfig): TensorConfig => (whole ? { ...t, dims: [-1, ...t.dims] } : t);
    const inputs = new Map(fn.input.map((t) => [t.name, shaped(t)]));
    const outputs = new Map(fn.output.map((t) => [t.name, shaped(t)]));
    for (const [name, tensor] of Object.entries(step.input_map)) {
      const t = inputs.get(name);
      if (!t) problems.push(`${at}: input_map names input '${name}', which '${fn.name}' does not have (it has: ${[...inputs.keys()].join(", ") || "none"})`);
      else agree(tensor, `${at} input '${name}'`, t);
    }
    for (const t of fn.input) if (!t.optional && !(t.name in step.input_map)) problems.push(`${at}: '${fn.name}' input '${t.name}' is not mapped in input_map`);
    for (const [name, tensor] of Object.entries(step.output_map)) {
      const t = outputs.get(name);
      if (!t) problems.push(`${at}: output_map names output '${name}', which '${fn.name}' does not have (it has: ${[...outputs.keys()].join(", ") || "none"})`);
      else agree(tensor, `${at} output '${name}'`, t);
    }
  });
  return problems;
}

function compatibleDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === -1 || b[i] === -1 || d === b[i]);
}
