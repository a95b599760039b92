export { createApp, routeHandlers } from "./create-app.ts";
export type { AppContext } from "./create-app.ts";
export { metricsOnly } from "./metrics-routes.ts";
export { parseKeyFile } from "../call/mod.ts";
export { createFastLane, withFastLane } from "./fast-lane.ts";
export type { FastLane, LaneRequest } from "./fast-lane.ts";
export { isProbe } from "./routes.ts";
