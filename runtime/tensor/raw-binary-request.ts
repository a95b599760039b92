import { invalidArg } from "../core/errors.ts";
import type { InferRequest } from "../core/inference.ts";
import { type DataType, elementCount, type TensorData } from "../core/tensor.ts";
import { decodeBinaryTensor } from "./binary-tensor.ts";
import { byteSize } from "./datatypes.ts";

/** The model's single input, as the HTTP layer supplies it for a raw binary request. */
export interface RawInputSignature {
  name: string;
  datatype: DataType;
  /** Full shape, batch dimension set to 1 by the caller for batching models; at most one -1. */
  shape: readonly number[];
}

/**
 * Decodes a raw binary request (`Inference-Header-Content-Length: 0`): the whole body is the data
 * of the model's single input. Non-BYTES: the one -1 dimension, if any, is inferred from the body
 * size. BYTES: the body is one element, without a length prefix, so the shape must hold one
 * element. Every output is then returned binary (`parameters.binary_data_output: true`).
 */
export function decodeRawBinaryRequest(body: Uint8Array, input: RawInputSignature): InferRequest {
  const { name, datatype } = input;
  const given = `[${input.shape.join(",")}]`;
  const variable = input.shape.filter((d) => d < 0).length;
  let shape: number[];
  let data: TensorData;
  if (datatype === "BYTES") {
    shape = input.shape.map((d) => (d < 0 ? 1 : d));
    if (elementCount(shape) !== 1) {
      throw invalidArg(
        `raw binary request: input '${name}' is BYTES with shape ${given}; a raw body carries exactly one element`,
      );
    }
    data = [body];
  } else {
    if (variable > 1) {
      throw invalidArg(
        `raw binary request: input '${name}' has shape ${given} with more than one variable dimension; send a JSON header`,
      );
    }
    shape = [...input.shape];
    if (variable === 1) {
      const rowBytes = elementCount(input.shape.filter((d) => d >= 0)) * byteSize(datatype);
      if (rowBytes === 0 || body.byteLength % rowBytes !== 0) {
        throw invalidArg(
          `raw binary request: input '${name}': ${body.byteLength} bytes do not fill ${datatype} shape ${given}`,
        );
      }
      shape[shape.findIndex((d) => d < 0)] = body.byteLength / rowBytes;
    }
    data = decodeBinaryTensor(body, { name, datatype, shape });
  }
  return { parameters: { binary_data_output: true }, inputs: [{ name, tensor: { datatype, shape, data } }] };
}
