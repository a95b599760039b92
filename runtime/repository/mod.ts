export { scanRepository, selectVersions } from "./scan-repository.ts";
export type { FunctionEntry, ScanOptions } from "./scan-repository.ts";
export { fingerprint } from "./fingerprint.ts";
export { folderReader, MAX_MODEL_FILE_BYTES, readExternalData, readModelFile, readNamedFile, uploadedReader } from "./read-model-file.ts";
export type { ExternalDataFile, FolderReader } from "./read-model-file.ts";
export { externalDataReferences } from "./onnx-external-data.ts";
export type { ExternalReference } from "./onnx-external-data.ts";
export { type LayoutReader, pulledModelBytes, pulledModelEntry } from "./pulled-model.ts";
