import { watch as fsWatch } from "node:fs";
import { writeFile } from "node:fs/promises";
import process from "node:process";
import { serve } from "@hono/node-server";
import { runCli } from "../cli.ts";
import type { Host } from "../host.ts";
import { createNodePlatform } from "./platform.ts";

/** Node host: @hono/node-server for sockets, process for signals and exit. */
export function nodeHost(args: string[]): Host {
  return {
    platform: createNodePlatform(),
    args,
    serve: (fetch, { hostname, port }) =>
      new Promise((resolve) => {
        const server = serve({ fetch, hostname, port }, (info) => {
          resolve({
            url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${info.port}`,
            close: () => new Promise<void>((done) => server.close(() => done())),
          });
        });
      }),
    watch: (dir, onChange) => {
      // Recursive watching is native on macOS and Windows and emulated on Linux since Node 20;
      // where it fails, the dev server's one-second poll still catches every change.
      try {
        const watcher = fsWatch(dir, { recursive: true }, onChange);
        watcher.on("error", () => watcher.close());
        return () => watcher.close();
      } catch {
        return () => {};
      }
    },
    writeTextFile: (path, text) => writeFile(path, text),
    onShutdown: (handler) => {
      process.once("SIGINT", handler);
      process.once("SIGTERM", handler);
    },
    exit: (code) => process.exit(code),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await runCli(nodeHost(process.argv.slice(2)));
