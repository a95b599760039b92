import { invalidArg } from "../core/errors.ts";
import type { InferRequest } from "../core/inference.ts";
import { type DataType, elementCount, type TensorData } from "../core/tensor.ts";
import { decodeBinaryTensor } from "./binary-tensor.ts";
import { byteSize } from "./datatypes.ts";
import { checkElementBudget, DEFAULT_MAX_ELEMENTS } from "./element-budget.ts";
import type { ElementLimit, ReadRequest } from "./request-codec.ts";

/** The model's single input, as the HTTP layer supplies it for a raw binary request. */
export interface RawInputSignature {
  name: string;
  datatype: DataType;
  /** Full shape, batch dimension set to 1 by the caller for batching models; at most one -1. */
  shape: readonly number[];
}

/**
 * Reads a raw binary request (`Inference-Header-Content-Length: 0`): the whole body is the data
 * of the model's single input. Non-BYTES: the one -1 dimension, if any, is inferred from the body
 * size. BYTES: the body is one element, without a length prefix, so the shape must hold one
 * element. Every output is then returned binary (`parameters.binary_data_output: true`). The data
 * is decoded by `decode`, once the header is checked and the element count within its limit.
 */
export function readRawBinaryRequest(body: Uint8Array, input: RawInputSignature): ReadRequest {
  const { name, datatype } = input;
  const shape = rawShape(body.byteLength, input);
  const header = { inputs: [{ name, datatype, shape }], parameters: { binary_data_output: true } };
  return {
    header,
    decode(limit: ElementLimit = {}): InferRequest {
      checkElementBudget([{ name, datatype, elements: elementCount(shape) }], limit.maxElements ?? DEFAULT_MAX_ELEMENTS, limit.limitName);
      const data: TensorData = datatype === "BYTES" ? [body] : decodeBinaryTensor(body, { name, datatype, shape });
      return { parameters: header.parameters, inputs: [{ name, tensor: { datatype, shape, data } }] };
    },
  };
}

/** `readRawBinaryRequest` and `decode` at once. */
export function decodeRawBinaryRequest(body: Uint8Array, input: RawInputSignature): InferRequest {
  return readRawBinaryRequest(body, input).decode();
}

/** The input's shape with its variable dimension filled from the body's size. */
function rawShape(bytes: number, input: RawInputSignature): number[] {
  const { name, datatype } = input;
  const given = `[${input.shape.join(",")}]`;
  if (datatype === "BYTES") {
    const shape = input.shape.map((d) => (d < 0 ? 1 : d));
    if (elementCount(shape) !== 1) {
      throw invalidArg(`raw binary request: input '${name}' is BYTES with shape ${given}; a raw body carries exactly one element`);
    }
    return shape;
  }
  const variable = input.shape.filter((d) => d < 0).length;
  if (variable > 1) {
    throw invalidArg(`raw binary request: input '${name}' has shape ${given} with more than one variable dimension; send a JSON header`);
  }
  const shape = [...input.shape];
  if (variable === 1) {
    const rowBytes = elementCount(input.shape.filter((d) => d >= 0)) * byteSize(datatype);
    if (rowBytes === 0 || bytes % rowBytes !== 0) {
      throw invalidArg(`raw binary request: input '${name}': ${bytes} bytes do not fill ${datatype} shape ${given}`);
    }
    shape[shape.findIndex((d) => d < 0)] = bytes / rowBytes;
  }
  return shape;
}
