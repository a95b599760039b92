import type { DataType } from "./tensor.ts";

/**
 * One tensor as a model file declares it: dims may be -1 where the model leaves them free
 * (ONNX symbolic or unknown dimensions). Backends produce these; config completion reads them.
 */
export interface TensorSignature {
  name: string;
  datatype: DataType;
  /** Full shape as the model declares it, batch dimension included; -1 = variable. */
  shape: number[];
}

/** Inputs and outputs of a loaded model, independent of any backend's own types. */
export interface ModelSignature {
  inputs: TensorSignature[];
  outputs: TensorSignature[];
}
