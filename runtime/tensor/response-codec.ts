import { invalidArg } from "../core/errors.ts";
import type { InferOutput, InferRequest, InferResponse } from "../core/inference.ts";
import { elementCount, type Tensor } from "../core/tensor.ts";
import { writeBinaryTensor } from "./binary-tensor.ts";
import { tensorByteLength } from "./datatypes.ts";
import { encodeJsonData } from "./json-tensor.ts";
import { smallBytes } from "./small-bytes.ts";

/**
 * An encoded response body. `headerLength` is set only when some output is binary: the HTTP layer
 * then sends `Inference-Header-Content-Length: headerLength` and `application/octet-stream`;
 * otherwise the body is plain JSON.
 */
export interface EncodedResponse {
  body: Uint8Array<ArrayBuffer>;
  headerLength?: number;
}

const utf8 = new TextEncoder();
/** Where the JSON text is encoded first, to learn its byte length without a buffer of its own. */
const scratch = new Uint8Array(16 * 1024);

/**
 * Encodes a response as KServe v2 JSON, with Triton's binary extension for the outputs that ask
 * for it. Policy:
 * - `request.outputs` given: exactly those outputs, in that order; a name the model did not
 *   produce is an INVALID_ARG naming it (Triton's wording), so the client learns of the typo.
 *   Otherwise every output of the response, in its order.
 * - An output is binary when its `RequestedOutput.binary` says so, else when the request
 *   parameter `binary_data_output` is true (the decoder resolves per-output overrides already).
 * - JSON `data` is flat; INT64/UINT64 digits are exact; FP16/BF16 as JSON are refused.
 * - `id` is the response's, else the request's; omitted when empty. `model_version` is omitted
 *   when empty.
 * The JSON header is built as one string; binary sections are written once into one buffer.
 */
export function encodeInferResponse(response: InferResponse, request: InferRequest): EncodedResponse {
  const binaryDefault = request.parameters.binary_data_output === true;
  const parts: string[] = [];
  const binary: Tensor[] = [];
  let binaryBytes = 0;
  for (const { output, binary: isBinary, shared } of selectOutputs(response, request, binaryDefault)) {
    const { name, tensor } = output;
    checkTensor(name, tensor);
    const head = `{"name":${JSON.stringify(name)},"datatype":"${tensor.datatype}","shape":[${tensor.shape.join(",")}]`;
    if (shared) {
      parts.push(`${head}}`); // written to the client's shared memory already (call/shared-outputs.ts)
    } else if (isBinary) {
      const size = tensorByteLength(tensor);
      parts.push(`${head},"parameters":{"binary_data_size":${size}}}`);
      binary.push(tensor);
      binaryBytes += size;
    } else {
      parts.push(`${head},"data":${encodeJsonData(tensor, { name })}}`);
    }
  }

  let header = `{"model_name":${JSON.stringify(response.modelName)}`;
  if (response.modelVersion) header += `,"model_version":${JSON.stringify(response.modelVersion)}`;
  const id = response.id ?? request.id;
  if (id) header += `,"id":${JSON.stringify(id)}`;
  if (response.parameters !== undefined && Object.keys(response.parameters).length > 0) {
    header += `,"parameters":${JSON.stringify(response.parameters)}`;
  }
  header += `,"outputs":[${parts.join(",")}]}`;

  const { body, headerLength } = encodeText(header, binaryBytes);
  if (binary.length === 0) return { body };
  let at = headerLength;
  for (const tensor of binary) at += writeBinaryTensor(tensor, { buffer: body, offset: at });
  return { body, headerLength };
}

/**
 * `text` as UTF-8 in a body with `room` bytes after it. A small reply is encoded into the scratch
 * buffer and copied into slab memory (`smallBytes`): no buffer of its own per reply.
 */
function encodeText(text: string, room: number): { body: Uint8Array<ArrayBuffer>; headerLength: number } {
  // Up to 3 bytes per UTF-16 unit: a text this short always fits the scratch buffer.
  if (text.length * 3 <= scratch.byteLength) {
    const { written } = utf8.encodeInto(text, scratch);
    const body = smallBytes(written + room);
    body.set(scratch.subarray(0, written));
    return { body, headerLength: written };
  }
  const json = utf8.encode(text);
  if (room === 0) return { body: json, headerLength: json.byteLength };
  const body = new Uint8Array(json.byteLength + room);
  body.set(json);
  return { body, headerLength: json.byteLength };
}

function selectOutputs(
  response: InferResponse,
  request: InferRequest,
  binaryDefault: boolean,
): { output: InferOutput; binary: boolean; shared: boolean }[] {
  if (request.outputs === undefined || request.outputs.length === 0) {
    return response.outputs.map((output) => ({ output, binary: binaryDefault, shared: false }));
  }
  const byName = new Map(response.outputs.map((o) => [o.name, o]));
  return request.outputs.map((requested) => {
    const output = byName.get(requested.name);
    if (output === undefined) {
      throw invalidArg(`unexpected inference output '${requested.name}' for model '${response.modelName}'`);
    }
    return { output, binary: requested.binary ?? binaryDefault, shared: requested.parameters?.shared_memory_region !== undefined };
  });
}

/** A backend that returns data of the wrong length is a bug, not the client's fault. */
function checkTensor(name: string, tensor: Tensor): void {
  const count = elementCount(tensor.shape);
  if (tensor.data.length !== count) {
    throw new Error(
      `output '${name}': ${tensor.data.length} elements of data for shape [${tensor.shape.join(",")}] (${count} expected)`,
    );
  }
}
