export type { Backend, LoadOptions, Session } from "./backend.ts";
export { createIdentityBackend } from "./identity-backend.ts";
export { createOnnxRuntimeBackend } from "./onnxruntime-backend.ts";
export { createOnnxRuntimeWebBackend } from "./onnxruntime-web-backend.ts";
export { isOrtFormat } from "./_ort-session.ts";
