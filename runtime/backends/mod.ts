export type { Backend, LoadOptions, Session } from "./backend.ts";
export { createIdentityBackend } from "./identity-backend.ts";
