/**
 * A ResNet-18-shaped image classifier with seeded random weights: the real
 * topology and cost (~11.7M parameters, ~1.8 GFLOPs per image) without
 * shipping pretrained weights. Useful as a realistic "heavy" model.
 *
 * BatchNorm is folded away: each Conv carries a bias instead, which is what
 * an inference export of a trained ResNet looks like after BN folding.
 */
import { DataType, encodeModel, graph, initializer, node, valueInfo } from "./onnx-graph.ts";
import type { AttributeValue, NodeProto, TensorProto } from "./onnx-graph.ts";
import { heLimit, mulberry32, uniform } from "./prng.ts";
import type { Random } from "./prng.ts";

/** Output width of the final classifier layer (ImageNet classes). */
export const RESNET_CLASSES = 1000;

/** Input image size (square, NCHW with 3 channels). */
export const RESNET_IMAGE_SIZE = 224;

const SEED = 0x7265736e; // "resn"

// Without BN the residual sum grows each block; shrinking the last conv of each
// residual branch (Fixup-style) keeps activations, and so the logits, moderate.
const BRANCH_GAIN = 0.5;

/** The graph being laid out: nodes and weights so far, and the weight source. */
interface Net {
  nodes: NodeProto[];
  initializers: TensorProto[];
  random: Random;
}

/** A Conv with He-uniform weights and a small bias; returns its output name. */
function conv(net: Net, name: string, x: string, inC: number, outC: number, kernel: number, stride: number, gain = 1): string {
  const fanIn = inC * kernel * kernel;
  const weight = uniform(net.random, outC * fanIn, heLimit(fanIn, gain));
  const bias = uniform(net.random, outC, 0.01);
  net.initializers.push(initializer(`${name}.weight`, weight, [outC, inC, kernel, kernel]));
  net.initializers.push(initializer(`${name}.bias`, bias, [outC]));
  const pad = Math.floor(kernel / 2);
  net.nodes.push(
    node("Conv", [x, `${name}.weight`, `${name}.bias`], [name], {
      kernel_shape: { ints: [kernel, kernel] },
      strides: { ints: [stride, stride] },
      pads: { ints: [pad, pad, pad, pad] },
    }),
  );
  return name;
}

/** A fully connected layer (Gemm with transposed weight, as exporters emit). */
function gemm(net: Net, name: string, x: string, inF: number, outF: number, limit: number): string {
  net.initializers.push(initializer(`${name}.weight`, uniform(net.random, outF * inF, limit), [outF, inF]));
  net.initializers.push(initializer(`${name}.bias`, uniform(net.random, outF, 0.01), [outF]));
  net.nodes.push(node("Gemm", [x, `${name}.weight`, `${name}.bias`], [name], { transB: { int: 1 } }));
  return name;
}

/** A weightless op whose node and output share `name`. */
function op(net: Net, opType: string, inputs: string[], name: string, attributes: Record<string, AttributeValue> = {}): string {
  net.nodes.push(node(opType, inputs, [name], attributes));
  return name;
}

/** Two 3x3 convs plus a shortcut (1x1/stride projection when the shape changes). */
function basicBlock(net: Net, name: string, x: string, inC: number, outC: number, stride: number): string {
  let y = conv(net, `${name}.conv1`, x, inC, outC, 3, stride);
  y = op(net, "Relu", [y], `${name}.relu1`);
  y = conv(net, `${name}.conv2`, y, outC, outC, 3, 1, BRANCH_GAIN);
  const shortcut = stride !== 1 || inC !== outC ? conv(net, `${name}.downsample`, x, inC, outC, 1, stride) : x;
  const sum = op(net, "Add", [y, shortcut], `${name}.add`);
  return op(net, "Relu", [sum], `${name}.relu2`);
}

/**
 * Encode the ResNet-18: input `input` [batch, 3, 224, 224] FP32, output
 * `logits` [batch, 1000] (no softmax, like torchvision's export).
 */
export function buildResnet(): Uint8Array {
  const net: Net = { nodes: [], initializers: [], random: mulberry32(SEED) };
  let x = conv(net, "stem.conv", "input", 3, 64, 7, 2);
  x = op(net, "Relu", [x], "stem.relu");
  x = op(net, "MaxPool", [x], "stem.maxpool", {
    kernel_shape: { ints: [3, 3] },
    strides: { ints: [2, 2] },
    pads: { ints: [1, 1, 1, 1] },
  });

  let channels = 64;
  [64, 128, 256, 512].forEach((outC, stage) => {
    for (let block = 0; block < 2; block++) {
      const stride = stage > 0 && block === 0 ? 2 : 1;
      x = basicBlock(net, `layer${stage + 1}.${block}`, x, channels, outC, stride);
      channels = outC;
    }
  });

  x = op(net, "GlobalAveragePool", [x], "pool");
  x = op(net, "Flatten", [x], "flatten");
  // Unit-variance weights (limit sqrt(3/fanIn)): logits keep the scale of the features.
  gemm(net, "logits", x, channels, RESNET_CLASSES, Math.sqrt(3 / channels));

  const g = graph({
    name: "resnet18",
    nodes: net.nodes,
    initializers: net.initializers,
    inputs: [valueInfo("input", DataType.FLOAT, ["batch", 3, RESNET_IMAGE_SIZE, RESNET_IMAGE_SIZE])],
    outputs: [valueInfo("logits", DataType.FLOAT, ["batch", RESNET_CLASSES])],
  });
  return encodeModel(g);
}
