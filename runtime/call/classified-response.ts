import type { InferRequest, InferResponse } from "../core/mod.ts";
import type { Deployment } from "../lifecycle/mod.ts";
import { classify } from "../tensor/mod.ts";

/**
 * The response as the client asked for it: each requested output with `parameters.classification: N`
 * (checked with the request) replaced by its top N classes, labelled from the output's
 * `label_filename` (Triton's classification extension, for every protocol).
 */
export function classifiedResponse(response: InferResponse, request: InferRequest, d: Deployment): InferResponse {
  const counts = new Map<string, number>();
  for (const o of request.outputs ?? []) {
    const n = o.parameters?.classification;
    if (typeof n === "number" && n > 0) counts.set(o.name, n);
  }
  if (counts.size === 0) return response;
  const batched = d.config.max_batch_size > 0;
  const outputs = response.outputs.map((output) => {
    const n = counts.get(output.name);
    return n === undefined ? output : { name: output.name, tensor: classify(output.tensor, n, { batched, labels: d.labelsOf(output.name), name: output.name }) };
  });
  return { ...response, outputs };
}
