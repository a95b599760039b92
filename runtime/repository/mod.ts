export { CONFIG_FILE, scanRepository, selectVersions } from "./scan-repository.ts";
export type { FunctionEntry } from "./scan-repository.ts";
export { fingerprint } from "./fingerprint.ts";
