export { scanRepository, selectVersions } from "./scan-repository.ts";
export type { FunctionEntry, ScanOptions } from "./scan-repository.ts";
export { fingerprint } from "./fingerprint.ts";
export { readModelFile } from "./read-model-file.ts";
export { type LayoutReader, pulledModelBytes, pulledModelEntry } from "./pulled-model.ts";
