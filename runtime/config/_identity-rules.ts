import type { TensorConfig } from "./function-config.ts";
import { formatDims, sameDims } from "./_dims.ts";
import type { PathProblem } from "./_describe-issues.ts";

type IdentityTensor = Pick<TensorConfig, "name" | "data_type" | "dims">;

/**
 * What `backend: identity` (Triton's built-in test backend: output i is input i) needs from a
 * config, since there is no model to complete or check it against: explicit inputs and outputs,
 * as many of each, and each output typed and shaped like its input.
 */
export function identityProblems(input: readonly IdentityTensor[], output: readonly IdentityTensor[]): PathProblem[] {
  const problems: PathProblem[] = [];
  if (input.length === 0) {
    problems.push({ path: ["input"], problem: "backend 'identity' has no model to take inputs from; list them" });
  }
  if (output.length === 0) {
    problems.push({ path: ["output"], problem: "backend 'identity' has no model to take outputs from; list them" });
  }
  if (problems.length > 0) return problems;
  if (output.length !== input.length) {
    problems.push({
      path: ["output"],
      problem: `backend 'identity' returns input i as output i, so it needs ${input.length} output(s) for ${input.length} input(s), not ${output.length}`,
    });
    return problems;
  }
  output.forEach((out, i) => {
    const source = input[i]!;
    if (out.data_type !== source.data_type) {
      problems.push({
        path: ["output", i, "data_type"],
        problem: `backend 'identity' returns input '${source.name}' here, so data_type must be ${source.data_type} like it, not ${out.data_type}`,
      });
    }
    if (!sameDims(out.dims, source.dims)) {
      problems.push({
        path: ["output", i, "dims"],
        problem: `backend 'identity' returns input '${source.name}' here, so dims must be ${formatDims(source.dims)} like it, not ${formatDims(out.dims)}`,
      });
    }
  });
  return problems;
}
