import type { Tensor } from "./tensor.ts";

/** Request and per-tensor parameters: string, number or boolean values (KServe `$parameters`). */
export type Parameters = Record<string, string | number | boolean>;

/** One named input of a request, decoded from JSON or binary. */
export interface InferInput {
  name: string;
  tensor: Tensor;
  parameters?: Parameters;
}

/** One output the client asked for; `binary` selects the binary extension for it. */
export interface RequestedOutput {
  name: string;
  binary?: boolean;
  parameters?: Parameters;
}

/** A decoded inference request, as the scheduler sees it. */
export interface InferRequest {
  id?: string;
  parameters: Parameters;
  inputs: InferInput[];
  /** Subset of outputs to return; undefined = all. */
  outputs?: RequestedOutput[];
}

/** One named output of a response. */
export interface InferOutput {
  name: string;
  tensor: Tensor;
}

/** The result of one request. */
export interface InferResponse {
  modelName: string;
  modelVersion: string;
  id?: string;
  parameters?: Parameters;
  outputs: InferOutput[];
}
