export { Deployment } from "./deployment.ts";
export type { DeploymentState } from "./deployment-state.ts";
export { DEFAULT_LOAD_TIMEOUT_MS, ModelManager } from "./model-manager.ts";
export { Lease } from "./lease.ts";
export type { LeaseRunOptions } from "./lease.ts";
export type { ControlMode, ModelManagerOptions, VersionStatus } from "./model-manager.ts";
export type { Budgets } from "./memory-budget.ts";
export { parseByteSize } from "./memory-budget.ts";
export type { UploadedFiles } from "./upload-quota.ts";
