/** Public surface for embedding tensorfn and for adapters. */
export { createRuntime, DEFAULT_MAX_INPUT_BYTES, modelSignatureReader, VERSION } from "./runtime.ts";
export type { Runtime, RuntimeOptions } from "./runtime.ts";
export type { Clock, CompileProblem, DirEntry, InferRequest, InferResponse, Logger, Platform, ProcessHandle, ProcessOptions, ReadOptions, SharedMemoryObject, Tensor } from "./core/mod.ts";
export type { ClientConnection, ClientConnections, DirectBody, Reply } from "./call/mod.ts";
export { streamed } from "./call/mod.ts";
export type { Router, RouterRequest } from "./http/mod.ts";
export { FileRefused, RuntimeError } from "./core/mod.ts";
export { HandlerError, reply, serveFunctionProcess } from "./pipeline/mod.ts";
export type { EscapeKind, FunctionAnswer, FunctionReply, FunctionRequest, Handler, HandlerContext } from "./pipeline/mod.ts";
export { isProbe, webFetch } from "./http/mod.ts";
export { smallBytes } from "./tensor/mod.ts";
