/**
 * `negate`: OUTPUT0 = -INPUT0, FP32 of any length. Not an example function: the isolation test and
 * bench serve it to move large tensors both ways (its compute is a fraction of their transfer).
 */
import { DataType, encodeModel, graph, node, valueInfo } from "./onnx-graph.ts";

/** The model's ONNX bytes. */
export function buildNegate(): Uint8Array {
  return encodeModel(graph({ name: "negate", nodes: [node("Neg", ["INPUT0"], ["OUTPUT0"])], inputs: [valueInfo("INPUT0", DataType.FLOAT, ["n"])], outputs: [valueInfo("OUTPUT0", DataType.FLOAT, ["n"])] }));
}

/** The function.yaml that serves it: no batching, any length. */
export const NEGATE_CONFIG = "max_batch_size: 0\ninput: [{ name: INPUT0, data_type: TYPE_FP32, dims: [-1] }]\noutput: [{ name: OUTPUT0, data_type: TYPE_FP32, dims: [-1] }]\n";
