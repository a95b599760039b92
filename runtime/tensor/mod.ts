export {
  allocate,
  byteSize,
  type ConfigDataType,
  DATA_TYPES,
  fromConfigType,
  fromOrtType,
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
export { decodeInferRequest, decodeRawBinaryRequest, type RawInputSignature } from "./request-codec.ts";
export { encodeInferResponse, type EncodedResponse } from "./response-codec.ts";
export { concatBatch, splitBatch } from "./batching.ts";
