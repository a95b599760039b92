/**
 * Triton's canonical `simple` example: two INT32 [batch, 16] inputs, their
 * element-wise sum and difference as outputs. The smallest useful model for
 * exercising the inference protocol.
 */
import { DataType, encodeModel, graph, node, valueInfo } from "./onnx-graph.ts";

const SHAPE = ["batch", 16];

/** Encode the `simple` model: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1. */
export function buildSimple(): Uint8Array {
  const g = graph({
    name: "simple",
    nodes: [node("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]), node("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"])],
    inputs: [valueInfo("INPUT0", DataType.INT32, SHAPE), valueInfo("INPUT1", DataType.INT32, SHAPE)],
    outputs: [valueInfo("OUTPUT0", DataType.INT32, SHAPE), valueInfo("OUTPUT1", DataType.INT32, SHAPE)],
  });
  return encodeModel(g);
}
