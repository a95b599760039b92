import { embeddingsCall, openAiCall, openAiModels } from "../call/mod.ts";
import type { CallContext, OpenAiKind, Reply } from "../call/mod.ts";
import { openAiErrorReply } from "./error-status.ts";
import type { ErrorLog } from "../call/mod.ts";
import type { RouteHandlers, RouteRequest } from "./routes.ts";
import { sseReply } from "./sse.ts";

/**
 * OpenAI's API on the generators and encoders: `/v1/models`, `/v1/completions`, `/v1/chat/completions` and `/v1/embeddings`,
 * streaming as Server-Sent Events (`data: {chunk}` … `data: [DONE]`, as OpenAI and vLLM send), errors
 * in OpenAI's shape. A failure before the first chunk is an ordinary error reply; after it the status
 * has gone, so it is a last `data: {"error": …}` event before `[DONE]`, as vLLM sends.
 */
export function openAiHandlers(ctx: CallContext & { log?: ErrorLog }) {
  const fail = (error: unknown) => openAiErrorReply(error, ctx.log, (t) => ctx.models.redact(t));
  // A failure before the status is sent is thrown: the router answers these routes' errors in OpenAI's shape.
  const complete = (kind: OpenAiKind) => async (r: RouteRequest): Promise<Reply> => {
    const answer = await openAiCall(ctx, kind, r.header, r.body);
    if (!answer.stream) return { status: 200, headers: { "content-type": "application/json" }, body: answer.json };
    return await sseReply(answer.chunks, (error) => fail(error).body as string, "[DONE]");
  };
  return {
    "openai-models": () => ({ status: 200, headers: { "content-type": "application/json" }, body: openAiModels(ctx) }),
    "openai-completions": complete("completion"),
    "openai-chat": complete("chat"),
    "openai-embeddings": async (r: RouteRequest): Promise<Reply> => ({ status: 200, headers: { "content-type": "application/json" }, body: await embeddingsCall(ctx, r.header, r.body) }),
  } satisfies Partial<RouteHandlers>;
}
