export { createApp } from "./create-app.ts";
export type { AppContext } from "./create-app.ts";
export { metricsOnly } from "./metrics-routes.ts";
export { parseKeyFile } from "./key-set.ts";
export type { DirectBody, ServeEnv } from "./direct-body.ts";
export { createFastLane, withFastLane } from "./fast-lane.ts";
export { ClientConnections } from "./client-connections.ts";
export type { FastLane, LaneRequest } from "./fast-lane.ts";
export type { Reply } from "./error-status.ts";
