import { describe, expect, it } from "vitest";
import { ensembleWiringProblems } from "../../../runtime/config/_ensemble-rules.ts";
import type { FunctionConfig, TensorConfig } from "../../../runtime/config/mod.ts";

const tensor = (name: string, dims: number[]): TensorConfig => ({ name, data_type: "TYPE_FP32", dims, optional: false });
type Wired = Pick<FunctionConfig, "name" | "max_batch_size" | "input" | "output">;
const fn = (name: string, max_batch_size: number, input: TensorConfig[], output: TensorConfig[]): Wired => ({ name, max_batch_size, input, output });
const ensemble = (max_batch_size: number, input: TensorConfig[], output: TensorConfig[], steps: [string, Record<string, string>, Record<string, string>][]) => ({
  name: "e",
  max_batch_size,
  input,
  output,
  ensemble_scheduling: { step: steps.map(([model_name, input_map, output_map]) => ({ model_name, model_version: -1, input_map, output_map })) },
});

describe("ensembleWiringProblems: dims across steps", () => {
  // A step that batches (dims [3, 8]) fed by one that does not: rows of a whole shape.
  const batching = fn("crop_model", 16, [tensor("x", [3, 8])], [tensor("y", [2])]);
  const whole = fn("prepare", 0, [tensor("image", [1])], [tensor("crops", [-1, 3, 8])]);

  it("in an ensemble without a batch dimension, compares whole shapes: a batching step takes [-1, …dims]", () => {
    const e = ensemble(0, [tensor("image", [1])], [tensor("probs", [-1, 2])], [
      ["prepare", { image: "image" }, { crops: "crops" }],
      ["crop_model", { x: "crops" }, { y: "probs" }],
    ]);
    expect(ensembleWiringProblems(e, [whole, batching])).toEqual([]);
    const wrong = fn("prepare", 0, [tensor("image", [1])], [tensor("crops", [3, 8])]);
    expect(ensembleWiringProblems(e, [wrong, batching])).toEqual(["tensor 'crops' has dims [3, 8] at step 0 ('prepare') output 'crops' but [-1, 3, 8] at step 1 ('crop_model') input 'x'"]);
  });

  it("in a batching ensemble, compares dims behind the batch dimension, as every step batches", () => {
    const step = fn("m", 8, [tensor("x", [4])], [tensor("y", [4])]);
    const e = ensemble(8, [tensor("A", [4])], [tensor("B", [4])], [["m", { x: "A" }, { y: "B" }]]);
    expect(ensembleWiringProblems(e, [step])).toEqual([]);
    expect(ensembleWiringProblems(e, [fn("m", 4, step.input, step.output)])).toEqual(["step 0 ('m'): 'm' batches up to 4, less than the ensemble's max_batch_size 8"]);
  });
});
