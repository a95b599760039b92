import { RuntimeError } from "../core/mod.ts";
import { bearerKey } from "./bearer-key.ts";
import type { HeaderLookup } from "./direct-body.ts";
import { KeySet } from "./key-set.ts";

/**
 * The API groups, after Triton's `--http-restricted-api`: each route belongs to one group, and
 * access is decided per group (createAuthorizer below: which key guards which).
 */
export type ApiGroup =
  | "health" // server liveness and readiness: open, for Kubernetes probes (they name no function)
  | "metadata" // GET /v2, model metadata, configuration and readiness (it names the reason), GET /v1/functions, GET /v1/models
  | "inference" // POST …/infer, …/generate[_stream], POST /v1/functions/{name}, OpenAI's /v1/completions, /v1/chat/completions, /v1/embeddings
  | "statistics" // GET …/stats
  | "repository" // index, load, unload, park
  | "shared-memory" // register, list and unregister shared-memory regions
  | "trace" // GET /v2/trace
  | "metrics" // GET /metrics (Prometheus)
  | "dashboard" // the dev dashboard's data: /v2/dashboard/*
  | "dashboard-page" // the dashboard's static page and assets (no data in them)
  | "other"; // anything else: answered 404/405 by the router, guarded like metadata

/** Groups that change or reveal server state beyond inference: the operator's, not the client's. */
export const CONTROL_GROUPS: ReadonlySet<ApiGroup> = new Set(["repository", "shared-memory", "trace", "dashboard", "dashboard-page"]);

/** Groups an API key guards when one is configured. */
export const API_GROUPS: ReadonlySet<ApiGroup> = new Set(["metadata", "inference", "statistics", "other"]);


/** Who may call what; every field is optional and absent means "not configured". */
export interface AccessOptions {
  /** `--api-key-file`: keys for metadata, inference and statistics. */
  apiKeys?: readonly string[];
  /** `--admin-key-file`: keys for the control routes (they also pass wherever an API key does). */
  adminKeys?: readonly string[];
  /** Explicit `--cors-origin` entries: trusted by the control routes' Origin check ("*" is not). */
  trustedOrigins?: readonly string[];
}

/**
 * Throws (or rejects with) UNAUTHENTICATED/PERMISSION_DENIED when the request may not call its
 * route; the policy below. A caller that matched the route already may say its group. Returns
 * `undefined` when the request may, decided without waiting (no keys to compare): the common
 * case of an open inference server costs no promise.
 */
export type Authorize = (method: string, path: string, header: HeaderLookup, group?: ApiGroup) => Promise<void> | undefined;

/**
 * The access policy as one function, for every protocol (HTTP's router, gRPC),
 * decided per API group before any route runs (so a refused request costs a header lookup and one
 * SHA-256, never a body read):
 * - health and metrics are always open (probes and scrapers carry no keys);
 * - metadata, inference and statistics need an API or admin key once API keys exist;
 * - shared memory (register, status, unregister) needs an API or admin key once API keys exist,
 *   as the inference that names its regions does: a region belongs to the key that registered it;
 *   without API keys it is a control route;
 * - control routes need an admin key once admin keys exist. Without admin keys they answer only
 *   requests a browser on another site cannot forge: Host a loopback name (refuses DNS rebinding),
 *   Origin absent or that same host (refuses cross-site requests), and a body only as
 *   application/json (refuses the text/plain and form posts a page may send without preflight).
 * `groupOf` places a path no caller matched to a route (HTTP's router; absent: "other", guarded as metadata).
 */
export function createAuthorizer(options: AccessOptions, groupOf: (path: string) => ApiGroup = () => "other"): Authorize {
  const open = !options.apiKeys?.length;
  const keys = Promise.all([KeySet.create(options.apiKeys ?? []), KeySet.create(options.adminKeys ?? [])]);
  const trusted = (options.trustedOrigins ?? []).filter((o) => o !== "*").map((o) => o.toLowerCase());
  // `group`: the route's group when the caller has matched the route already (the router).
  return (method, path, header, known) => {
    const group = known ?? groupOf(path);
    if (group === "health" || group === "metrics" || (open && API_GROUPS.has(group))) return undefined;
    // The path names the route in a refusal: without a query string (the router passes the request line's target).
    return keys.then(([api, admin]) => authorize({ method, path: path.split("?", 1)[0]!, header }, group, { api, admin, trusted }));
  };
}

interface Call {
  method: string;
  path: string;
  header: HeaderLookup;
}

async function authorize(request: Call, group: ApiGroup, keys: { api: KeySet; admin: KeySet; trusted: string[] }): Promise<void> {
  if (group === "health" || group === "metrics") return;
  const what = `${request.method} ${request.path}`;
  // Shared memory takes inference's keys once API keys exist (an inference reads and writes the
  // regions it names); without them it is a control route, below.
  if (API_GROUPS.has(group) || (group === "shared-memory" && keys.api.size > 0)) {
    if (keys.api.size === 0) return;
    const token = bearer(request, what);
    if (!(await keys.api.has(token)) && !(await keys.admin.has(token))) throw badKey(what);
    return;
  }
  if (!CONTROL_GROUPS.has(group)) return;
  if (keys.admin.size === 0) return localOnly(request, what, keys.trusted);
  // The page and its script hold no data and a browser cannot send a key when it navigates.
  if (group === "dashboard-page") return;
  const token = bearer(request, what);
  if (await keys.admin.has(token)) return;
  if (await keys.api.has(token)) throw new RuntimeError("PERMISSION_DENIED", `${what} needs an admin key (--admin-key-file); the key presented is an API key`);
  throw badKey(what);
}

/** The key from `Authorization: Bearer <key>`; the key itself never appears in a message. */
function bearer(request: Call, what: string): string {
  const key = bearerKey(request.header);
  if (key === undefined) throw new RuntimeError("UNAUTHENTICATED", `${what} needs a key: send 'Authorization: Bearer <key>'`);
  if (typeof key !== "string") throw new RuntimeError("UNAUTHENTICATED", `${what}: the Authorization header must be 'Bearer <key>'`);
  return key;
}

function badKey(what: string): RuntimeError {
  return new RuntimeError("UNAUTHENTICATED", `${what}: the key in the Authorization header is not valid`);
}

const LOOPBACK_HOST = /^(localhost|127(\.[0-9]{1,3}){3}|\[::1\])(:[0-9]{1,5})?$/;

function localOnly(request: Call, what: string, trusted: string[]): void {
  const host = (request.header("host") ?? "").toLowerCase();
  const hint = "without --admin-key-file, control routes answer only requests to the server's loopback address";
  if (!LOOPBACK_HOST.test(host)) {
    throw new RuntimeError("PERMISSION_DENIED", `${what} refused: ${hint} (Host 127.0.0.1, localhost or [::1]), not Host '${quote(host)}'`);
  }
  const origin = request.header("origin")?.toLowerCase();
  if (origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}` && !trusted.includes(origin)) {
    throw new RuntimeError("PERMISSION_DENIED", `${what} refused: ${hint} from a page the server served itself, not from Origin '${quote(origin)}'`);
  }
  const hasBody = Number(request.header("content-length") ?? 0) > 0 || request.header("transfer-encoding") !== undefined;
  const type = request.header("content-type") ?? "";
  // A page's body is typed, or untyped with an Origin (a Blob): both must be JSON. One untyped and
  // without an Origin comes from no browser — Triton's Python client sends its JSON so.
  const untypedClient = type === "" && origin === undefined;
  if (hasBody && !untypedClient && !/^application\/([a-z0-9.+-]+\+)?json *(;|$)/i.test(type)) {
    throw new RuntimeError("PERMISSION_DENIED", `${what} refused: a request body to a control route must be sent as Content-Type: application/json, not '${quote(type)}'`);
  }
}

/** Echoed header values, cut short: a message is not a place for an attacker's payload. */
function quote(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
