export { createApp } from "./create-app.ts";
export type { AppContext } from "./create-app.ts";
export { metricsOnly } from "./metrics-routes.ts";
export { parseKeyFile } from "./key-set.ts";
export type { DirectBody, ServeEnv } from "./direct-body.ts";
