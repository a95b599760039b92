export { routeHandlers } from "./route-handlers.ts";
export type { AppContext } from "./route-handlers.ts";
export { metricsHandlers } from "./metrics-routes.ts";
export { parseKeyFile } from "../call/mod.ts";
export { createRouter, webFetch } from "./router.ts";
export type { Router, RouterRequest } from "./router.ts";
export { isProbe } from "./routes.ts";
