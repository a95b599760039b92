import { functionCall, jsonReply } from "../call/mod.ts";
import type { CallContext } from "../call/mod.ts";
import type { RouteHandlers, RouteRequest } from "./routes.ts";

/**
 * Function-style calls (ours): the list of every function with its kind and state, and a call
 * that hands the body as it is to the function (call/function-call.ts).
 */
export function functionHandlers(ctx: CallContext) {
  return {
    functions: () => jsonReply(200, { functions: ctx.models.functions() }),
    "function-call": (r: RouteRequest) => functionCall(ctx, { name: r.params.name!, header: r.header, body: r.body }),
  } satisfies Partial<RouteHandlers>;
}
