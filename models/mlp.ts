/**
 * A dense FP32 classifier (512 → 2048 → 1024 → 10, softmax) with seeded
 * weights, plus a plain-TypeScript forward pass so tests can check what a
 * server returns against an independent reference.
 */
import { DataType, encodeModel, graph, initializer, node, valueInfo } from "./onnx-graph.ts";
import type { NodeProto, TensorProto } from "./onnx-graph.ts";
import { heLimit, mulberry32, uniform } from "./prng.ts";

/** Layer widths, input first. */
export const MLP_SIZES = [512, 2048, 1024, 10] as const;

const SEED = 0x6d6c70; // "mlp"

/** One dense layer: `weight` is row-major [inputs, outputs], as MatMul wants. */
export interface DenseLayer {
  inputs: number;
  outputs: number;
  weight: Float32Array;
  bias: Float32Array;
}

let cached: readonly DenseLayer[] | undefined;

/**
 * The exact weights `buildMlp` embeds, first layer first. Generated once and
 * shared, so treat the arrays as read-only.
 */
export function mlpWeights(): readonly DenseLayer[] {
  if (cached) return cached;
  const random = mulberry32(SEED);
  const layers: DenseLayer[] = [];
  for (let i = 0; i + 1 < MLP_SIZES.length; i++) {
    const inputs = MLP_SIZES[i];
    const outputs = MLP_SIZES[i + 1];
    // He init for the ReLU layers; the last layer uses gain 1/sqrt(2) (Glorot-ish)
    // so logits stay O(1) and the softmax is not saturated.
    const gain = i + 2 === MLP_SIZES.length ? Math.SQRT1_2 : 1;
    const weight = uniform(random, inputs * outputs, heLimit(inputs, gain));
    const bias = uniform(random, outputs, 1 / Math.sqrt(inputs));
    layers.push({ inputs, outputs, weight, bias });
  }
  cached = Object.freeze(layers);
  return cached;
}

/** Encode the MLP: input `input` [batch, 512] → output `probabilities` [batch, 10]. */
export function buildMlp(): Uint8Array {
  const layers = mlpWeights();
  const nodes: NodeProto[] = [];
  const initializers: TensorProto[] = [];
  let x = "input";
  layers.forEach((layer, i) => {
    const w = `dense${i}.weight`;
    const b = `dense${i}.bias`;
    initializers.push(initializer(w, layer.weight, [layer.inputs, layer.outputs]));
    initializers.push(initializer(b, layer.bias, [layer.outputs]));
    nodes.push(node("MatMul", [x, w], [`dense${i}.matmul`]));
    nodes.push(node("Add", [`dense${i}.matmul`, b], [`dense${i}.out`]));
    x = `dense${i}.out`;
    if (i + 1 < layers.length) {
      nodes.push(node("Relu", [x], [`dense${i}.relu`]));
      x = `dense${i}.relu`;
    }
  });
  nodes.push(node("Softmax", [x], ["probabilities"], { axis: { int: -1 } }));
  const g = graph({
    name: "mlp",
    nodes,
    initializers,
    inputs: [valueInfo("input", DataType.FLOAT, ["batch", MLP_SIZES[0]])],
    outputs: [valueInfo("probabilities", DataType.FLOAT, ["batch", MLP_SIZES.at(-1)!])],
  });
  return encodeModel(g);
}

/**
 * The same forward pass in plain TypeScript (float64 accumulation):
 * `input` is row-major [batch, 512], the result row-major [batch, 10].
 */
export function mlpReference(input: Float32Array, batch: number): Float32Array {
  const layers = mlpWeights();
  if (input.length !== batch * MLP_SIZES[0]) {
    throw new Error(`mlpReference: expected ${batch * MLP_SIZES[0]} values, got ${input.length}`);
  }
  const out = new Float32Array(batch * MLP_SIZES.at(-1)!);
  for (let row = 0; row < batch; row++) {
    let x: Float64Array = Float64Array.from(input.subarray(row * MLP_SIZES[0], (row + 1) * MLP_SIZES[0]));
    layers.forEach((layer, i) => {
      x = dense(x, layer, i + 1 < layers.length);
    });
    out.set(softmax(x), row * x.length);
  }
  return out;
}

function dense(x: Float64Array, layer: DenseLayer, relu: boolean): Float64Array {
  const y = Float64Array.from(layer.bias);
  // Loop order i-then-j walks the row-major weight matrix sequentially.
  for (let i = 0; i < layer.inputs; i++) {
    const xi = x[i];
    if (xi === 0) continue;
    const row = i * layer.outputs;
    for (let j = 0; j < layer.outputs; j++) y[j] += xi * layer.weight[row + j];
  }
  if (relu) for (let j = 0; j < y.length; j++) y[j] = Math.max(0, y[j]);
  return y;
}

function softmax(x: Float64Array): Float64Array {
  const max = Math.max(...x);
  const e = x.map((v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}
