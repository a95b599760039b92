/**
 * A tiny helper layer over onnx-proto, so the model builders read like graphs
 * rather than protobuf plumbing. Only what the example models need.
 */
import onnxProto from "onnx-proto";
import type { onnx as proto } from "onnx-proto";

// onnx-proto is a CommonJS protobufjs module: under Node ESM only the default
// export (module.exports) exists, so `import { onnx }` fails at runtime.
const { onnx } = onnxProto;

/** ONNX tensor element types used by the builders. */
export const DataType = onnx.TensorProto.DataType;

/** Protobuf message shapes, re-exported so builders need not import onnx-proto. */
export type NodeProto = proto.INodeProto;
export type TensorProto = proto.ITensorProto;
export type ValueInfoProto = proto.IValueInfoProto;
export type GraphProto = proto.IGraphProto;

/** A dimension: a number is fixed, a string is symbolic (e.g. "batch"). */
export type Dim = number | string;

/** An attribute value; its key (int, ints, float, floats) picks the ONNX attribute type. */
export type AttributeValue =
  | { int: number }
  | { ints: number[] }
  | { float: number }
  | { floats: number[] };

/** Numeric arrays accepted as initializer contents. */
export type TensorData = Float32Array | Int32Array | BigInt64Array | Uint8Array;

/** What `graph()` takes: nodes plus named inputs, outputs and weights. */
export interface GraphSpec {
  name: string;
  nodes: NodeProto[];
  inputs: ValueInfoProto[];
  outputs: ValueInfoProto[];
  initializers?: TensorProto[];
}

const ELEMENT_TYPE = new Map<Function, number>([
  [Float32Array, DataType.FLOAT],
  [Int32Array, DataType.INT32],
  [BigInt64Array, DataType.INT64],
  [Uint8Array, DataType.UINT8],
]);

/**
 * A constant tensor (weights, biases). Stored as raw little-endian bytes,
 * which is compact and fast to encode even for ResNet-sized weights.
 */
export function initializer(name: string, data: TensorData, dims: number[]): TensorProto {
  const count = dims.reduce((a, b) => a * b, 1);
  if (count !== data.length) {
    throw new Error(`initializer ${name}: dims [${dims}] hold ${count} values, got ${data.length}`);
  }
  const dataType = ELEMENT_TYPE.get(data.constructor);
  if (dataType === undefined) throw new Error(`initializer ${name}: unsupported array type`);
  // Copy so the proto owns its bytes regardless of the view's offset.
  // Typed arrays are host-endian; every platform ORT runs on is little-endian.
  const rawData = new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  return { name, dataType, dims, rawData };
}

/** A graph input or output: element type plus shape (numbers or symbols). */
export function valueInfo(name: string, elemType: number, dims: Dim[]): ValueInfoProto {
  const dim = dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d }));
  return { name, type: { tensorType: { elemType, shape: { dim } } } };
}

/** One operator. `name` defaults to the first output, which keeps names unique. */
export function node(
  opType: string,
  inputs: string[],
  outputs: string[],
  attributes: Record<string, AttributeValue> = {},
  name?: string,
): NodeProto {
  const attribute = Object.entries(attributes).map(([key, value]) => attributeProto(key, value));
  return { opType, input: inputs, output: outputs, name: name ?? outputs[0] ?? opType, attribute };
}

function attributeProto(name: string, value: AttributeValue): proto.IAttributeProto {
  const Type = onnx.AttributeProto.AttributeType;
  if ("int" in value) return { name, type: Type.INT, i: value.int };
  if ("ints" in value) return { name, type: Type.INTS, ints: value.ints };
  if ("float" in value) return { name, type: Type.FLOAT, f: value.float };
  return { name, type: Type.FLOATS, floats: value.floats };
}

/** Assemble a GraphProto from its parts. */
export function graph(spec: GraphSpec): GraphProto {
  return {
    name: spec.name,
    node: spec.nodes,
    input: spec.inputs,
    output: spec.outputs,
    initializer: spec.initializers ?? [],
  };
}

/**
 * Appends `nodes` and graph `outputs` to an existing model (a pretrained one, as its bytes),
 * leaving everything it had as it was; the opset stays the model's, so the nodes must exist there.
 */
export function extendModel(bytes: Uint8Array, nodes: NodeProto[], outputs: ValueInfoProto[]): Uint8Array {
  const model = onnx.ModelProto.decode(bytes);
  const g = model.graph!;
  g.node = [...(g.node ?? []), ...nodes.map((n) => onnx.NodeProto.create(n))];
  g.output = [...(g.output ?? []), ...outputs.map((o) => onnx.ValueInfoProto.create(o))];
  return new Uint8Array(onnx.ModelProto.encode(model).finish());
}

/** A model's graph outputs: name and dims (a number, or the symbol of a dynamic one). */
export function modelOutputs(bytes: Uint8Array): { name: string; dims: Dim[] }[] {
  const g = onnx.ModelProto.decode(bytes).graph!;
  return (g.output ?? []).map((o) => ({
    name: o.name ?? "",
    dims: (o.type?.tensorType?.shape?.dim ?? []).map((d) => (d.dimParam ? d.dimParam : Number(d.dimValue ?? 0))),
  }));
}

/**
 * Serialise a graph as an ONNX model (IR version 8, default domain at
 * `opset`, 17 unless given). protobufjs writes fields in schema order, so the
 * same graph always yields the same bytes.
 */
export function encodeModel(g: GraphProto, options: { opset?: number } = {}): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: "", version: options.opset ?? 17 }],
    producerName: "tensorfn-models",
    graph: g,
  });
  // protobufjs hands back a Node Buffer, small ones sliced from a shared pool;
  // copy into a plain Uint8Array that owns exactly its bytes.
  return new Uint8Array(onnx.ModelProto.encode(model).finish());
}
