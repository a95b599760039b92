export {
  allocate,
  byteSize,
  type ConfigDataType,
  DATA_TYPES,
  CONFIG_DATA_TYPES,
  fromConfigType,
  fromOrtType,
  INTEGER_RANGE,
  isDataType,
  type OrtType,
  type StorageConstructor,
  storageFor,
  tensorByteLength,
  toConfigType,
  toOrtType,
} from "./datatypes.ts";
export { decodeJsonData, encodeJsonData, type JsonTensorTarget } from "./json-tensor.ts";
export { type BinaryTensorTarget, decodeBinaryTensor, encodeBinaryTensor, writeBinaryTensor } from "./binary-tensor.ts";
export {
  type DecodeOptions,
  decodeInferRequest,
  type ElementLimit,
  readInferRequest,
  type ReadRequest,
  readShared,
  type InputHeader,
  type RequestHeader,
} from "./request-codec.ts";
export { decodeRawBinaryRequest, type RawInputSignature, readRawBinaryRequest } from "./raw-binary-request.ts";
export { checkElementBudget, DEFAULT_MAX_ELEMENTS, type ElementCount, OBJECT_ELEMENT_WEIGHT } from "./element-budget.ts";
export { encodeInferResponse, type EncodedResponse } from "./response-codec.ts";
export { batchOf, batchParts, concatBatch, plainTensors, splitBatch } from "./batching.ts";
export { classCount, classify, MAX_CLASSIFIED_ELEMENTS } from "./classification.ts";
export { SMALL_BYTES_MAX, smallBytes, smallStorage } from "./small-bytes.ts";
export { type SharedMemoryReader, type SharedRef, sharedOutput, sharedRef, withoutSharedKeys } from "./shared-ref.ts";
export { copyTensor } from "./copy-tensor.ts";
export type { ChatMessage, TokenCodec, TokenizerFiles } from "./token-codec.ts";
import type { TokenCodec, TokenizerFiles } from "./token-codec.ts";
/** A generator's tokenizer; its libraries (@huggingface/tokenizers and jinja) load with the first one, not at every start. */
export async function loadTokenCodec(files: TokenizerFiles): Promise<TokenCodec> {
  const { TokenCodec } = await import("./token-codec.ts");
  return new TokenCodec(files);
}
