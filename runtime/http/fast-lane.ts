import type { AppContext } from "./create-app.ts";
import { createAuthorizer } from "./access.ts";
import { compressReply } from "./compression.ts";
import type { DirectBody } from "./direct-body.ts";
import { errorReply, toResponse } from "./error-status.ts";
import type { Reply } from "./error-status.ts";
import { inferCall } from "./infer-call.ts";
import { functionCall } from "./function-routes.ts";
import { health } from "./kserve-routes.ts";
import { requestBody } from "./read-body.ts";
import type { HeaderLookup } from "./read-body.ts";

/** A request as an adapter's own HTTP server sees it, before any web `Request` is built. */
export interface LaneRequest {
  method: string;
  /** Path and query, as on the request line. */
  url: string;
  header: HeaderLookup;
  body: DirectBody;
}

/**
 * The routes a loaded server answers thousands of times a second, answered without the Hono app:
 * `undefined` when the request is not one of them (the adapter then hands it to `app.fetch`).
 * On Node, building the web `Request`, its `Headers`, the `Response` and the middleware chain cost
 * more CPU per small inference than decoding, batching and running the model, in a CPU profile of
 * the server under `simple` at 8 clients (`node --cpu-prof adapters/node/bin.mjs serve …`).
 * Same behaviour as the app: the same access policy, the same `inferCall`, `functionCall` and `health`, the same
 * error replies, compressed as the app compresses. A request with an Origin goes to the app when
 * `--cors-origin` is set (its CORS middleware answers preflights and adds the headers).
 */
export type FastLane = (request: LaneRequest) => Promise<Reply> | undefined;

const INFER = /^\/v2\/models\/([A-Za-z0-9_.-]+)(?:\/versions\/([0-9]+))?\/infer(?:\?|$)/;
const HEALTH = /^\/v2\/health\/(live|ready)(?:\?|$)/;
const FUNCTION = /^\/v1\/functions\/([A-Za-z0-9_.-]+)(?:\?|$)/;

export function createFastLane(ctx: AppContext): FastLane {
  const authorize = createAuthorizer({ ...ctx.access, trustedOrigins: ctx.corsOrigins });
  const cors = (ctx.corsOrigins?.length ?? 0) > 0;
  const fail = (error: unknown) => errorReply(error, ctx.log.error, (text) => ctx.models.redact(text));
  return (request) => {
    const { method, url, header } = request;
    if (cors && header("origin") !== undefined) return undefined;
    let answer: Promise<Reply>;
    if (method === "POST") {
      const m = INFER.exec(url);
      const f = m ? undefined : FUNCTION.exec(url);
      if (!m && !f) return undefined;
      const run = m ? () => inferCall(ctx, { name: m[1]!, version: m[2], header, body: request.body }) : () => functionCall(ctx, { name: f![1]!, header, body: request.body });
      // Both routes are inference (api-groups.ts; a test keeps them so): no second match to decide it.
      const allowed = authorize(method, url, header, "inference");
      answer = allowed ? allowed.then(run) : run();
    } else if (method === "GET") {
      const m = HEALTH.exec(url);
      if (!m) return undefined;
      answer = Promise.resolve(m[1] as "live" | "ready").then((which) => health(ctx, which));
    } else {
      return undefined;
    }
    const encoding = header("accept-encoding");
    const replied = answer.catch(fail);
    return encoding === undefined ? replied : replied.then((reply) => compressReply(reply, encoding));
  };
}

/**
 * The lane in front of a fetch handler, for servers that hand over web `Request`s natively (Bun,
 * Deno): inference and health skip the Hono router and middleware chain; the rest goes to `fetch`.
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
