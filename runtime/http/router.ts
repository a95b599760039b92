import type { DirectBody, HeaderLookup, Reply } from "../call/mod.ts";
import { createAuthorizer, jsonReply, requestBody, streamed } from "../call/mod.ts";
import type { ApiGroup } from "../call/mod.ts";
import { COMPRESSED, compressReply } from "./compression.ts";
import { CorsPolicy } from "./cors.ts";
import type { AppContext } from "./route-handlers.ts";
import { routeHandlers } from "./route-handlers.ts";
import { errorReply, openAiErrorReply, toResponse } from "./error-status.ts";
import { apiGroup, pathPattern, ROUTES } from "./routes.ts";
import type { RouteHandler, RouteHandlers, RouteId, RouteRequest } from "./routes.ts";

/** A request as an adapter's HTTP server sees it: no web `Request` is built for it. */
export interface RouterRequest {
  method: string;
  /** The request line's target: path and query (an absolute URL is taken too). */
  url: string;
  header: HeaderLookup;
  body: DirectBody;
}

/**
 * The HTTP server as one function: every request in, a `Reply` out. It matches the route table's
 * rows (routes.ts), runs the access policy, the route's handler, its error mapping and
 * compression, and answers what no row takes: 404, 405 (with `Allow`), HEAD as its GET without the
 * body, and CORS preflights under `--cors-origin`. Node's adapter calls it straight from its
 * HTTP server, Bun's through `webFetch`; in a CPU profile of the server under `simple` at
 * 8 clients, building a web `Request`, its `Headers`, a `Response` and a middleware chain per
 * request had cost more than decoding, batching and running the model.
 */
export type Router = (request: RouterRequest) => Promise<Reply>;

interface Row {
  re: RegExp;
  group: ApiGroup;
  handle: RouteHandler;
  /** The route's error reply: OpenAI's shape on its routes. */
  fail: ErrorShape;
}

const NONE: readonly Row[] = [];

type ErrorShape = (error: unknown) => Reply;

/** The rows that have a handler, by method, in the table's order, matched on the request target (a query string may follow). */
function rowsByMethod(handlers: Partial<Record<RouteId, RouteHandler>>, kserve: ErrorShape, openAi: ErrorShape): Map<string, Row[]> {
  const byMethod = new Map<string, Row[]>();
  for (const route of ROUTES) {
    const handle = handlers[route.id];
    if (!handle) continue;
    const rows = byMethod.get(route.method) ?? [];
    for (const path of route.paths) {
      const re = pathPattern(path, (_, constraint) => (constraint ? `(?:${constraint})` : "[^/?]+"), "(?:\\?|$)");
      rows.push({ re, group: route.group, handle, fail: "errors" in route ? openAi : kserve });
    }
    byMethod.set(route.method, rows);
  }
  return byMethod;
}

export function createRouter(ctx: AppContext, handlers: Partial<RouteHandlers> = routeHandlers(ctx)): Router {
  const authorize = createAuthorizer({ ...ctx.access, trustedOrigins: ctx.corsOrigins });
  const redact = (text: string) => ctx.models.redact(text);
  const kserve = (error: unknown) => errorReply(error, ctx.log, redact);
  const openAi = (error: unknown) => openAiErrorReply(error, ctx.log, redact);
  const byMethod = rowsByMethod(handlers, kserve, openAi);
  const openAiPaths = new Set<string>(ROUTES.flatMap((r) => ("errors" in r ? r.paths : [])));

  /** A request no row of its method takes: refused as its path's group would be, then 404 or 405. */
  const unmatched = (method: string, url: string, header: HeaderLookup): Promise<Reply> => {
    const path = url.split("?", 1)[0]!;
    const allowed = [...byMethod].filter(([, rows]) => rows.some((r) => r.re.test(url))).map(([m]) => m);
    const answer = () => {
      if (allowed.length === 0) return jsonReply(404, { error: "Not Found" });
      const reply = jsonReply(405, { error: "Method Not Allowed" });
      reply.headers.allow = allowed.join(", ");
      return reply;
    };
    // An OPTIONS carries no key (a browser's preflight never does): its 404 or 405 is no secret.
    const refused = method === "OPTIONS" ? undefined : authorize(method, url, header, apiGroup(path));
    // A refusal on an OpenAI path in OpenAI's shape, as its routes answer (its clients raise typed errors).
    return refused ? refused.then(answer, openAiPaths.has(path) ? openAi : kserve) : Promise.resolve(answer());
  };

  const route: Router = (request) => {
    const { method, header } = request;
    const url = originForm(request.url);
    let match: RegExpExecArray | null = null;
    let row: Row | undefined;
    for (const r of byMethod.get(method === "HEAD" ? "GET" : method) ?? NONE) {
      if ((match = r.re.exec(url))) {
        row = r;
        break;
      }
    }
    if (!row) return unmatched(method, url, header);
    const routeRequest = new MatchedRequest(match!.groups ?? {}, url, request);
    const run = () => row.handle(routeRequest);
    // The group is the row's: no second match to decide it.
    const allowed = authorize(method, url, header, row.group);
    const replied = (allowed ? allowed.then(run) : settle(run)).catch(row.fail);
    const encoding = header("accept-encoding");
    const answer = encoding === undefined || !COMPRESSED.has(row.group) ? replied : replied.then((reply) => compressReply(reply, encoding));
    return method === "HEAD" ? answer.then(withoutBody) : answer;
  };

  if (!ctx.corsOrigins?.length) return route;
  const cors = new CorsPolicy(ctx.corsOrigins);
  return (request) => {
    const { header } = request;
    if (request.method === "OPTIONS") return Promise.resolve(cors.preflight(header));
    return route(request).then((reply) => cors.answer(reply, header));
  };
}

/**
 * The target as a path: an absolute URL (`GET http://host/v2 HTTP/1.1`, allowed by RFC 9112) loses
 * its scheme and authority; anything else that is not a path (`*`) is left to match no route.
 */
function originForm(url: string): string {
  if (url.startsWith("/")) return url;
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url);
  if (!authority) return url;
  const path = url.indexOf("/", authority[0].length);
  return path < 0 ? "/" : url.slice(path);
}

/**
 * A HEAD's answer: its GET's. The server sends no body for a HEAD (Node's drops it, `webFetch`
 * too) but its length, as RFC 9110 asks; a stream, whose length is unknown, is stopped at once.
 */
function withoutBody(reply: Reply): Reply {
  if (!streamed(reply.body)) return reply;
  void reply.body.cancel().catch(() => {});
  return { ...reply, body: "" };
}

/** `run()` as a promise, a synchronous throw included, without waiting a turn when it returns one. */
function settle(run: () => Reply | Promise<Reply>): Promise<Reply> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A matched request as a route sees it (a class: see call/call-options.ts on accessors in literals). */
class MatchedRequest implements RouteRequest {
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly #url: string;
  readonly #request: RouterRequest;

  constructor(params: Record<string, string | undefined>, url: string, request: RouterRequest) {
    this.params = decoded(params);
    this.#url = url;
    this.#request = request;
  }

  get header(): HeaderLookup {
    return this.#request.header;
  }

  get body(): DirectBody {
    return this.#request.body;
  }

  query(name: string): string | undefined {
    const q = this.#url.indexOf("?");
    return q < 0 ? undefined : (new URLSearchParams(this.#url.slice(q + 1)).get(name) ?? undefined);
  }
}

/** Path parameters percent-decoded (`a%20b` is the function `a b`); one that does not decode is kept as sent. */
function decoded(params: Record<string, string | undefined>): Record<string, string | undefined> {
  for (const name in params) {
    const value = params[name]!;
    if (value.includes("%")) {
      try {
        params[name] = decodeURIComponent(value);
      } catch {
        // Malformed (`%zz`): the name as sent, which no function has.
      }
    }
  }
  return params;
}

/** A HEAD's `Response`: the headers, with the length of the body it leaves out. */
function headResponse(reply: Reply): Response {
  const { body } = reply;
  const length = typeof body === "string" ? new TextEncoder().encode(body).byteLength : streamed(body) ? undefined : body.byteLength;
  return new Response(null, { status: reply.status, headers: length === undefined ? reply.headers : { ...reply.headers, "content-length": String(length) } });
}

/** The router as a web fetch handler, for servers that hand over web `Request`s (Bun, Deno) and for embedding. */
export function webFetch(router: Router): (request: Request) => Promise<Response> {
  return (request) => {
    const { url, method } = request;
    const path = url.indexOf("/", url.indexOf("//") + 2);
    const reply = router({ method, url: path < 0 ? "/" : url.slice(path), header: (name) => request.headers.get(name) ?? undefined, body: requestBody(request) });
    return method === "HEAD" ? reply.then(headResponse) : reply.then(toResponse);
  };
}
