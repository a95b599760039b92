import { describe, expect, it } from "vitest";
import onnxProto from "onnx-proto";
import { externalDataReferences } from "../../../runtime/repository/mod.ts";
import { DataType, encodeModel, graph, node, valueInfo } from "../../../models/onnx-graph.ts";
import type { TensorProto } from "../../../models/onnx-graph.ts";

const { onnx } = onnxProto;

const external = (name: string, location: string, length = 4): TensorProto => ({
  name,
  dataType: DataType.UINT8,
  dims: [length],
  dataLocation: 1,
  externalData: [{ key: "location", value: location }, { key: "offset", value: "2" }, { key: "length", value: String(length) }],
});

describe("externalDataReferences()", () => {
  it("finds every tensor ONNX can keep elsewhere: initializers, sparse ones, a Constant's value, tensor lists, subgraphs of If, functions and training graphs", () => {
    const branch = graph({ name: "then", nodes: [node("Identity", ["B"], ["b"])], inputs: [], outputs: [valueInfo("b", DataType.UINT8, [4])], initializers: [external("B", "branch.bin")] });
    const constant = { ...node("Constant", [], ["c"]), attribute: [{ name: "value", type: onnx.AttributeProto.AttributeType.TENSOR, t: external("C", "const.bin") }] };
    const list = { ...node("Custom", [], ["l"]), attribute: [{ name: "ts", type: onnx.AttributeProto.AttributeType.TENSORS, tensors: [external("L", "list.bin")] }] };
    const ifNode = { ...node("If", ["cond"], ["y"]), attribute: [{ name: "then_branch", type: onnx.AttributeProto.AttributeType.GRAPH, g: branch }] };
    const g = graph({ name: "g", nodes: [constant, list, ifNode], inputs: [valueInfo("cond", DataType.BOOL, [])], outputs: [valueInfo("y", DataType.UINT8, [4])], initializers: [external("W", "weights.bin"), { name: "plain", dataType: DataType.UINT8, dims: [1], rawData: new Uint8Array([1]) }] });
    g.sparseInitializer = [{ values: external("S", "sparse.bin"), indices: { name: "i", dataType: DataType.INT64, dims: [1], rawData: new Uint8Array(8) }, dims: [8] }];
    const model = onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: "", version: 17 }],
      graph: g,
      functions: [{ name: "f", domain: "d", node: [{ ...node("Constant", [], ["k"]), attribute: [{ name: "value", type: onnx.AttributeProto.AttributeType.TENSOR, t: external("F", "function.bin") }] }] }],
      trainingInfo: [{ initialization: graph({ name: "init", nodes: [], inputs: [], outputs: [], initializers: [external("T", "training.bin")] }) }],
    });
    const found = externalDataReferences(new Uint8Array(onnx.ModelProto.encode(model).finish()));
    expect(found.map((r) => [r.tensor, r.location]).sort()).toEqual(
      [["B", "branch.bin"], ["C", "const.bin"], ["F", "function.bin"], ["L", "list.bin"], ["S", "sparse.bin"], ["T", "training.bin"], ["W", "weights.bin"]].sort(),
    );
    expect(found.every((r) => r.end === 6)).toBe(true); // offset 2 + length 4
  });

  it("finds none in a model that keeps its weights inline, and refuses bytes that are not a model", () => {
    expect(externalDataReferences(encodeModel(graph({ name: "n", nodes: [node("Neg", ["x"], ["y"])], inputs: [valueInfo("x", DataType.FLOAT, [2])], outputs: [valueInfo("y", DataType.FLOAT, [2])] })))).toEqual([]);
    expect(() => externalDataReferences(new TextEncoder().encode("{\"not\": \"a model\"}"))).toThrow(/not an ONNX model/);
  });

  it("refuses subgraphs nested past 64 levels, without a stack overflow", () => {
    let inner = graph({ name: "leaf", nodes: [], inputs: [], outputs: [] });
    for (let i = 0; i < 200; i++) inner = graph({ name: `g${i}`, nodes: [{ ...node("If", ["c"], ["y"]), attribute: [{ name: "then_branch", type: onnx.AttributeProto.AttributeType.GRAPH, g: inner }] }], inputs: [], outputs: [] });
    expect(() => externalDataReferences(encodeModel(inner))).toThrow(/nests subgraphs more than 64 deep/);
  });
});
