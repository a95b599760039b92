/**
 * The API groups, after Triton's `--http-restricted-api`: each route belongs to one group, and
 * access is decided per group (see access.ts for which key guards which).
 */
export type ApiGroup =
  | "health" // server liveness and readiness: open, for Kubernetes probes (they name no function)
  | "metadata" // GET /v2, model metadata, configuration and readiness (it names the reason), GET /v1/functions
  | "inference" // POST …/infer, POST /v1/functions/{name}
  | "statistics" // GET …/stats
  | "repository" // index, load, unload, park
  | "trace" // GET /v2/trace
  | "metrics" // GET /metrics (Prometheus)
  | "dashboard" // the dev dashboard's data: /v2/dashboard/*
  | "dashboard-page" // the dashboard's static page and assets (no data in them)
  | "other"; // anything else: answered 404/405 by the router, guarded like metadata

const MODEL = String.raw`^/v2/models/[^/]+(/versions/[^/]+)?`;
const rules: [RegExp, ApiGroup][] = [
  [/^\/v2\/health\/(live|ready)$/, "health"],
  [new RegExp(`${MODEL}/ready$`), "metadata"],
  [/^\/v2\/models\/stats$/, "statistics"],
  [new RegExp(`${MODEL}/stats$`), "statistics"],
  [new RegExp(`${MODEL}/infer$`), "inference"],
  [/^\/v1\/functions\/[^/]+$/, "inference"],
  [/^\/v1\/functions$/, "metadata"],
  [new RegExp(`${MODEL}(/config)?$`), "metadata"],
  [/^\/v2\/?$/, "metadata"],
  [/^\/v2\/repository(\/|$)/, "repository"],
  [/^\/v2\/trace$/, "trace"],
  [/^\/v2\/dashboard(\/|$)/, "dashboard"],
  [/^\/metrics$/, "metrics"],
  [/^\/(dashboard\.(js|css))?$/, "dashboard-page"],
];

/** The group a request path belongs to. */
export function apiGroup(path: string): ApiGroup {
  for (const [re, group] of rules) if (re.test(path)) return group;
  return "other";
}

/** Groups that change or reveal server state beyond inference: the operator's, not the client's. */
export const CONTROL_GROUPS: ReadonlySet<ApiGroup> = new Set(["repository", "trace", "dashboard", "dashboard-page"]);

/** Groups an API key guards when one is configured. */
export const API_GROUPS: ReadonlySet<ApiGroup> = new Set(["metadata", "inference", "statistics", "other"]);
