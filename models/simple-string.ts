/**
 * Triton's `simple_string` example: like `simple`, but inputs and outputs are
 * STRING tensors holding decimal integers, to exercise BYTES/string handling.
 */
import { DataType, encodeModel, graph, node, valueInfo } from "./onnx-graph.ts";

const SHAPE = ["batch", 16];

/**
 * Encode `simple_string`: parse both inputs to INT32, add and subtract, and
 * format the results back as decimal strings (OUTPUT0 = sum, OUTPUT1 = difference).
 */
export function buildSimpleString(): Uint8Array {
  const toInt = { to: { int: DataType.INT32 } };
  const toString = { to: { int: DataType.STRING } };
  const g = graph({
    name: "simple_string",
    nodes: [
      node("Cast", ["INPUT0"], ["input0_int"], toInt),
      node("Cast", ["INPUT1"], ["input1_int"], toInt),
      node("Add", ["input0_int", "input1_int"], ["sum_int"]),
      node("Sub", ["input0_int", "input1_int"], ["difference_int"]),
      node("Cast", ["sum_int"], ["OUTPUT0"], toString),
      node("Cast", ["difference_int"], ["OUTPUT1"], toString),
    ],
    inputs: [valueInfo("INPUT0", DataType.STRING, SHAPE), valueInfo("INPUT1", DataType.STRING, SHAPE)],
    outputs: [valueInfo("OUTPUT0", DataType.STRING, SHAPE), valueInfo("OUTPUT1", DataType.STRING, SHAPE)],
  });
  return encodeModel(g);
}
