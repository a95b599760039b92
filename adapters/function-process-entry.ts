// The child of `isolation: process` (adapters/function-process.ts forks it): the runtime's function
// process on this runtime's platform, over the IPC channel to the server. It ends when the server
// goes (the channel closes), whatever the function left running.
import process from "node:process";
// Only the function process and what it needs, not the whole server: a restart waits for this import.
import { serveFunctionProcess } from "../runtime/pipeline/function-process.ts";
import type { Logger, Platform } from "../runtime/core/mod.ts";
import * as promClient from "prom-client";
import { CustomMetrics, providePromClient } from "../runtime/metrics/custom-metrics.ts";
import { logOptionsFromEnv } from "./console-logger.ts";
import { LANE_READY, processLane } from "./tensor-lane.ts";
import { killTree, processTree } from "./process-tree.ts";

// prom-client for ctx.metrics (checked by the server's rules here), imported with this module: no
// await may come between the lane's word below and the message handler serveFunctionProcess sets.
providePromClient(promClient);
const label = process.env.TENSORFN_PROCESS_LABEL ?? "function";
const log = logOptionsFromEnv(process.env);
const platform: Platform =
  "Deno" in globalThis ? (await import("./deno/platform.ts")).createDenoPlatform(log) : (await import("./node/platform.ts")).createNodePlatform(undefined, { log });
const logger: Logger = platform.log;
// Large tensors through /dev/shm, when the server handed over a lane (tensor-lane.ts); said first.
const lane = processLane(process.env);
if (lane) process.send?.(LANE_READY);
serveFunctionProcess(
  { ...platform, log: { info: (m) => logger.info(`[${label} process] ${m}`), warn: (m) => logger.warn(`[${label} process] ${m}`), error: (m) => logger.error(`[${label} process] ${m}`) } },
  {
    post: (message) => void process.send?.(lane ? lane.pack(message) : message),
    onMessage: (handler) => void process.on("message", (message) => handler(lane ? lane.unpack(message) : message)),
  },
  // ctx.metrics checked here by the server's rules; what the handler does with them is replayed there.
  { metrics: (fn) => new CustomMetrics().forFunction(fn) },
);
// Whatever ends this process — the server gone (the channel closes), a handler's exit call or an
// uncaught error — what it started goes first. A native crash or a kill has no such hook: the
// server's side then kills the process group and the children it saw (function-process.ts).
process.on("exit", () => killTree(process.pid, processTree(process.pid), { group: false }));
process.on("disconnect", () => process.exit(0));
