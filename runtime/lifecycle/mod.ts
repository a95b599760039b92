export { Deployment } from "./deployment.ts";
export type { DeploymentState } from "./deployment-state.ts";
export { ModelManager } from "./model-manager.ts";
export type { ModelManagerOptions, VersionStatus } from "./model-manager.ts";
