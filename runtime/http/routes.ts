import type { ApiGroup, DirectBody, HeaderLookup, Reply } from "../call/mod.ts";

const MODEL = "/v2/models/:name";
const VERSION = "/v2/models/:name/versions/:version{[0-9]+}";
const both = (suffix: string) => [MODEL + suffix, VERSION + suffix] as const;

/**
 * Every route the server answers, declared once: the router (router.ts) matches these rows in this
 * order (a fixed path before a parameter that would match it); its 405s and the access groups
 * derive from them. Paths as `:param` or `:param{regex}`, Hono's syntax. A row's handler is found
 * by its `id` (route-handlers.ts; the type makes every id need one). test/architecture.test.ts keeps route paths out of every other file.
 */
export const ROUTES = [
  { id: "server-metadata", method: "GET", paths: ["/v2"], group: "metadata" },
  { id: "health", method: "GET", paths: ["/v2/health/:probe{live|ready}"], group: "health" },
  { id: "stats", method: "GET", paths: ["/v2/models/stats", ...both("/stats")], group: "statistics" },
  { id: "model-metadata", method: "GET", paths: both(""), group: "metadata" },
  { id: "model-ready", method: "GET", paths: both("/ready"), group: "metadata" },
  { id: "model-config", method: "GET", paths: both("/config"), group: "metadata" },
  { id: "infer", method: "POST", paths: both("/infer"), group: "inference" },
  { id: "generate", method: "POST", paths: both("/generate"), group: "inference" },
  { id: "generate-stream", method: "POST", paths: both("/generate_stream"), group: "inference" },
  { id: "repository-index", method: "POST", paths: ["/v2/repository/index"], group: "repository" },
  { id: "repository-load", method: "POST", paths: ["/v2/repository/models/:name/load"], group: "repository" },
  { id: "repository-unload", method: "POST", paths: ["/v2/repository/models/:name/unload"], group: "repository" },
  { id: "repository-park", method: "POST", paths: ["/v2/repository/models/:name/park"], group: "repository" },
  { id: "repository-rollout", method: "GET", paths: ["/v2/repository/models/:name/rollout"], group: "repository" },
  { id: "repository-rollout-change", method: "POST", paths: ["/v2/repository/models/:name/rollout"], group: "repository" },
  { id: "system-shm-status", method: "GET", paths: ["/v2/systemsharedmemory/status", "/v2/systemsharedmemory/region/:region/status"], group: "shared-memory" },
  { id: "system-shm-register", method: "POST", paths: ["/v2/systemsharedmemory/region/:region/register"], group: "shared-memory" },
  { id: "system-shm-unregister", method: "POST", paths: ["/v2/systemsharedmemory/unregister", "/v2/systemsharedmemory/region/:region/unregister"], group: "shared-memory" },
  { id: "cuda-shm-status", method: "GET", paths: ["/v2/cudasharedmemory/status", "/v2/cudasharedmemory/region/:region/status"], group: "shared-memory" },
  { id: "cuda-shm-register", method: "POST", paths: ["/v2/cudasharedmemory/region/:region/register"], group: "shared-memory" },
  { id: "cuda-shm-unregister", method: "POST", paths: ["/v2/cudasharedmemory/unregister", "/v2/cudasharedmemory/region/:region/unregister"], group: "shared-memory" },
  { id: "trace", method: "GET", paths: ["/v2/trace"], group: "trace" },
  { id: "functions", method: "GET", paths: ["/v1/functions"], group: "metadata" },
  { id: "function-call", method: "POST", paths: ["/v1/functions/:name"], group: "inference" },
  { id: "openai-models", method: "GET", paths: ["/v1/models"], group: "metadata", errors: "openai" },
  { id: "openai-completions", method: "POST", paths: ["/v1/completions"], group: "inference", errors: "openai" },
  { id: "openai-chat", method: "POST", paths: ["/v1/chat/completions"], group: "inference", errors: "openai" },
  { id: "openai-embeddings", method: "POST", paths: ["/v1/embeddings"], group: "inference", errors: "openai" },
  { id: "metrics", method: "GET", paths: ["/metrics"], group: "metrics" },
  { id: "dashboard-page", method: "GET", paths: ["/"], group: "dashboard-page" },
  { id: "dashboard-script", method: "GET", paths: ["/dashboard.js"], group: "dashboard-page" },
  { id: "dashboard-style", method: "GET", paths: ["/dashboard.css"], group: "dashboard-page" },
  { id: "dashboard-snapshot", method: "GET", paths: ["/v2/dashboard/snapshot"], group: "dashboard" },
  { id: "dashboard-events", method: "GET", paths: ["/v2/dashboard/events"], group: "dashboard" },
  { id: "dashboard-history", method: "GET", paths: ["/v2/dashboard/history"], group: "dashboard" },
] as const satisfies readonly RouteRow[];

/**
 * Paths no route answers that still belong to a group: whatever a control route's prefix holds is
 * the operator's (refused as a control route before a 404), never an open or API-key path.
 */
const GROUP_PREFIXES: readonly [string, ApiGroup][] = [
  ["/v2/repository/", "repository"],
  ["/v2/systemsharedmemory/", "shared-memory"],
  ["/v2/cudasharedmemory/", "shared-memory"],
  ["/v2/dashboard/", "dashboard"],
];

export interface RouteRow {
  id: string;
  method: "GET" | "POST";
  paths: readonly string[];
  group: ApiGroup;
  /** Errors in OpenAI's shape (`{"error": {"message", "type", "param", "code"}}`), a refused key's included: its clients raise their typed errors. */
  errors?: "openai";
}

export type RouteId = (typeof ROUTES)[number]["id"];

/** A request as a route handler sees it, whichever adapter's server carried it. */
export interface RouteRequest {
  /** The path's parameters by name (percent-decoded). */
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly header: HeaderLookup;
  query(name: string): string | undefined;
  /** The body, unread; its signal aborts when the client goes away. */
  readonly body: DirectBody;
}

/** What a handler answers: a `Reply`, its body a stream where it streams (SSE), whichever server writes it. */
export type RouteHandler = (request: RouteRequest) => Reply | Promise<Reply>;
export type RouteHandlers = Record<RouteId, RouteHandler>;

/** The group a request path belongs to (the path without its query). */
export function apiGroup(path: string): ApiGroup {
  for (const { re, group } of GROUP_PATTERNS) if (re.test(path)) return group;
  for (const [prefix, group] of GROUP_PREFIXES) if (path.startsWith(prefix)) return group;
  return "other";
}

/**
 * A route path as a regular expression with a named group per parameter. `param` gives the
 * pattern of a parameter from its name and its own constraint (undefined when it has none).
 * `tail` follows the path (`$`, or what may come after it such as a query string).
 */
export function pathPattern(path: string, param: (name: string, constraint: string | undefined) => string, tail = "$"): RegExp {
  let source = "^";
  for (const part of path.split(/(:[A-Za-z_]+(?:\{[^}]*\})?)/)) {
    const m = /^:([A-Za-z_]+)(?:\{([^}]*)\})?$/.exec(part);
    source += m ? `(?<${m[1]}>${param(m[1]!, m[2])})` : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(source + tail);
}

/** Whether a request line's target (path and query) is a health probe's, for an adapter that answers probes first. */
export function isProbe(url: string): boolean {
  return PROBE_PATTERNS.some((re) => re.test(url));
}

/** Any segment for every parameter: a version that is not a number is still the group's path. */
const GROUP_PATTERNS = ROUTES.flatMap((r) => r.paths.map((p) => ({ re: pathPattern(p, () => "[^/]+"), group: r.group as ApiGroup })));

const PROBE_PATTERNS = ROUTES.filter((r) => r.group === "health").flatMap((r) => r.paths.map((p) => pathPattern(p, (_, c) => (c ? `(?:${c})` : "[^/?]+"), "(?:\\?|$)")));
