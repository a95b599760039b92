import type { DirectBody, HeaderLookup, Reply } from "../call/mod.ts";
import { requestBody } from "../call/mod.ts";
import { createAuthorizer } from "../call/mod.ts";
import { COMPRESSED, compressReply } from "./compression.ts";
import type { AppContext } from "./create-app.ts";
import { routeHandlers } from "./create-app.ts";
import { errorReply, openAiErrorReply, toResponse } from "./error-status.ts";
import { pathPattern, ROUTES } from "./routes.ts";
import type { ApiGroup } from "../call/mod.ts";
import type { RouteHandler, RouteHandlers, RouteId, RouteRequest } from "./routes.ts";

/** A request as an adapter's own HTTP server sees it, before any web `Request` is built. */
export interface LaneRequest {
  method: string;
  /** Path and query, as on the request line. */
  url: string;
  header: HeaderLookup;
  body: DirectBody;
}

/**
 * Every route of the table answered without the Hono app: `undefined` when the request is not one
 * the lane takes (a path no row matches, a name percent-encoded, a HEAD or OPTIONS, an Origin under
 * `--cors-origin`: the adapter then hands it to `app.fetch`, whose router, CORS and 404/405 answer
 * it). On Node, building the web `Request`, its `Headers`, the `Response` and the middleware chain
 * cost more CPU per small inference than decoding, batching and running the model, in a CPU profile
 * of the server under `simple` at 8 clients (`node --cpu-prof adapters/node/bin.mjs serve …`). Same
 * behaviour as the app: the same access policy, the same handlers, the same error replies,
 * compressed as the app compresses (test/e2e/fast-lane.test.ts compares them).
 */
export type FastLane = (request: LaneRequest) => Promise<Reply> | undefined;

const NONE: readonly LaneRoute[] = [];

// Names as the lane matches them: a name with other characters (percent-encoded) goes to the app, which decodes it.
const NAME = "[A-Za-z0-9_.-]+";

interface LaneRoute {
  re: RegExp;
  group: ApiGroup;
  handle: RouteHandler;
  /** The route's error reply (OpenAI's shape on its routes), as the app's error handler answers it. */
  fail: (error: unknown) => Reply;
}

/** The routes that have a handler by method, in the table's order, matched on the request line (a query string may follow). */
function laneRoutes(ctx: AppContext, handlers: Partial<Record<RouteId, RouteHandler>>): Map<string, LaneRoute[]> {
  const redact = (text: string) => ctx.models.redact(text);
  const kserve = (error: unknown) => errorReply(error, ctx.log, redact);
  const openAi = (error: unknown) => openAiErrorReply(error, ctx.log, redact);
  const byMethod = new Map<string, LaneRoute[]>();
  for (const route of ROUTES) {
    const handle = handlers[route.id];
    if (!handle) continue;
    const fail = "errors" in route ? openAi : kserve;
    const rows = byMethod.get(route.method) ?? [];
    for (const path of route.paths) rows.push({ group: route.group, handle, fail, re: pathPattern(path, (_, constraint) => (constraint ? `(?:${constraint})` : NAME), "(?:\\?|$)") });
    byMethod.set(route.method, rows);
  }
  return byMethod;
}

export function createFastLane(ctx: AppContext, handlers: Partial<RouteHandlers> = routeHandlers(ctx)): FastLane {
  const authorize = createAuthorizer({ ...ctx.access, trustedOrigins: ctx.corsOrigins });
  const cors = (ctx.corsOrigins?.length ?? 0) > 0;
  const routes = laneRoutes(ctx, handlers);
  return (request) => {
    const { method, url, header } = request;
    if (cors && header("origin") !== undefined) return undefined;
    let match: RegExpExecArray | null = null;
    let route: LaneRoute | undefined;
    for (const r of routes.get(method) ?? NONE) {
      if ((match = r.re.exec(url))) {
        route = r;
        break;
      }
    }
    if (!route) return undefined;
    const routeRequest = new LaneRouteRequest(match!.groups ?? {}, request);
    const run = () => route.handle(routeRequest);
    // The group is the row's: no second match to decide it.
    const allowed = authorize(method, url, header, route.group);
    const answer = allowed ? allowed.then(run) : settle(run);
    const encoding = header("accept-encoding");
    const replied = answer.catch(route.fail);
    return encoding === undefined || !COMPRESSED.has(route.group) ? replied : replied.then((reply) => compressReply(reply, encoding));
  };
}

/** `run()` as a promise, a synchronous throw included, without waiting a turn when it returns one. */
function settle(run: () => Reply | Promise<Reply>): Promise<Reply> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A lane request as a route sees it (a class: see call/call-options.ts on accessors in literals). */
class LaneRouteRequest implements RouteRequest {
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly #request: LaneRequest;

  constructor(params: Record<string, string | undefined>, request: LaneRequest) {
    this.params = params;
    this.#request = request;
  }

  get header(): HeaderLookup {
    return this.#request.header;
  }

  get body(): DirectBody {
    return this.#request.body;
  }

  query(name: string): string | undefined {
    const url = this.#request.url;
    const q = url.indexOf("?");
    return q < 0 ? undefined : (new URLSearchParams(url.slice(q + 1)).get(name) ?? undefined);
  }
}

/**
 * The lane in front of a fetch handler, for servers that hand over web `Request`s natively (Bun,
 * Deno): the table's routes skip the Hono router and middleware chain; what the lane leaves goes to `fetch`.
 */
export function withFastLane(fetch: (request: Request) => Response | Promise<Response>, lane: FastLane): (request: Request) => Response | Promise<Response> {
  return (request) => {
    const url = request.url;
    const path = url.indexOf("/", url.indexOf("//") + 2);
    const reply = lane({
      method: request.method,
      url: path < 0 ? "/" : url.slice(path),
      header: (name) => request.headers.get(name) ?? undefined,
      body: requestBody(request),
    });
    return reply ? reply.then(toResponse) : fetch(request);
  };
}
