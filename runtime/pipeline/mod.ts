export { HandlerError, reply } from "./handler-api.ts";
export type { FunctionAnswer, FunctionReply, FunctionRequest, Handler, HandlerContext, SequenceHookEvent } from "./handler-api.ts";
export { HandlerHost } from "./handler-host.ts";
export type { HandlerHostOptions, HandlerOutcome, HandlerStep } from "./handler-host.ts";
export { createHandlerBackend } from "./handler-backend.ts";
export { checkComputedOutputs, checkHandlerInputs, encodeAnswer, functionRequest, outputsAnswer } from "./function-io.ts";
export { HandlerEscapes } from "./handler-escapes.ts";
export { readableStack } from "./handler-stacks.ts";
export type { EscapeKind, EscapeOwner } from "./handler-escapes.ts";
