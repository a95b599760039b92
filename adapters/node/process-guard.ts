import { writeFile } from "node:fs/promises";
import process from "node:process";
import type { EscapeKind } from "../../runtime/mod.ts";
import type { Host } from "../host.ts";

/** The process's own exit, taken before any guard replaces it: the server's shutdown ends the process with it. */
export const exitProcess: (code: number) => never = process.exit.bind(process) as (code: number) => never;

/**
 * Keeps user code from ending the server (Node and Bun): an exception nobody catches (a throw in a
 * handler's timer) and a rejection nobody awaits go to `report` instead of killing the process,
 * and `process.exit()` / `process.abort()` throw where they are called (a handler's call then
 * fails with that error, its own request answered 500). The server itself exits through
 * `exitProcess`. Code that blocks the thread or exhausts the heap still takes the process with
 * it: that needs a process of its own.
 */
export function guardProcess(report: (error: unknown, kind: EscapeKind) => void): void {
  process.on("uncaughtException", (error) => report(error, "exception"));
  process.on("unhandledRejection", (reason) => report(reason, "rejection"));
  process.exit = refuse("process.exit()") as typeof process.exit;
  process.abort = refuse("process.abort()") as typeof process.abort;
}

function refuse(call: string): () => never {
  return () => {
    throw new Error(`${call} was refused: code running in the server cannot stop it (send it SIGTERM)`);
  };
}

/** What a Host does through Node's process and fs, the same under Node and Bun. */
export const nodeProcessHooks: Pick<Host, "writeTextFile" | "onShutdown" | "guard" | "exit"> = {
  writeTextFile: (path, text) => writeFile(path, text),
  onShutdown: (handler) => {
    process.on("SIGINT", () => handler("SIGINT"));
    process.on("SIGTERM", () => handler("SIGTERM"));
  },
  guard: guardProcess,
  exit: exitProcess,
};
