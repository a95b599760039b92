import { generateCall } from "../call/mod.ts";
import type { CallContext, Reply } from "../call/mod.ts";
import { invalidArg } from "../core/mod.ts";
import { errorReply } from "./error-status.ts";
import type { ErrorLog } from "../call/mod.ts";
import type { RouteHandlers, RouteRequest } from "./routes.ts";
import { sseReply } from "./sse.ts";

/**
 * Triton's generate extension over HTTP: `generate` answers one JSON object; `generate_stream`
 * answers Server-Sent Events, one `data:` event per response and no closing sentinel (Triton's
 * format). A failure before the first response is an ordinary error reply with its status; after
 * it the status line has gone, so the failure is a last `data: {"error": …}` event, as Triton sends.
 */
export function generateHandlers(ctx: CallContext & { log?: ErrorLog }) {
  const call = (r: RouteRequest, stream = true) => generateCall(ctx, { name: r.params.name!, version: r.params.version, header: r.header, body: r.body }, stream);
  return {
    generate: async (r: RouteRequest): Promise<Reply> => {
      const events = await call(r, false);
      const first = await events.next();
      if (first.done) throw invalidArg(`model '${r.params.name}' sent no response`);
      if (!(await events.next()).done) {
        await events.return();
        throw invalidArg(`model '${r.params.name}' sends several responses to a request; call it with POST …/generate_stream`);
      }
      return { status: 200, headers: { "content-type": "application/json" }, body: first.value };
    },
    "generate-stream": async (r: RouteRequest): Promise<Reply> =>
      await sseReply(await call(r), (error) => errorReply(error, ctx.log, (t) => ctx.models.redact(t)).body as string),
  } satisfies Partial<RouteHandlers>;
}
