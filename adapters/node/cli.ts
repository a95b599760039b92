import { watch as fsWatch } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { Server } from "node:http";
import process from "node:process";
import { runCli } from "../cli.ts";
import type { Host } from "../host.ts";
import { answerClientErrors } from "./client-error.ts";
import { CHECK_INTERVAL_MS, limitConnections } from "./connection-limits.ts";
import { reportConnections, requestListener } from "./request-listener.ts";
import { createNodePlatform } from "./platform.ts";
import { logOptionsFrom } from "../console-logger.ts";
import { exitProcess, guardProcess } from "./process-guard.ts";
import type { CompiledModules } from "./platform.ts";

// bin.mjs imports both from the compiled CLI.
export { runCli };

/**
 * Node host: node:http with the runtime's fast lane, @hono/node-server for the rest; process for signals and exit.
 * `compiled`: where bin.mjs runs the sources compiled ahead, what its worker threads load instead of TypeScript.
 */
export function nodeHost(args: string[], compiled?: CompiledModules): Host {
  const platform = createNodePlatform(undefined, { compiled, log: logOptionsFrom(args) });
  return {
    platform,
    args,
    serve: (fetch, { hostname, port, lane, clients, limits }) =>
      new Promise((resolve) => {
        const listener = requestListener(fetch, lane);
        const server: Server = createServer({ connectionsCheckingInterval: CHECK_INTERVAL_MS });
        const limited = limits && limitConnections(server, limits, (message) => platform.log.warn(message));
        server.on("request", limited ? limited.guard(listener) : listener);
        server.on("close", () => limited?.stop());
        if (clients) reportConnections(server, clients);
        server.listen(port, hostname, () => {
          const address = server.address();
          resolve({
            url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${typeof address === "object" && address ? address.port : port}`,
            close: () => closeGracefully(server),
          });
        });
        answerClientErrors(server);
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
      process.on("SIGINT", () => handler("SIGINT"));
      process.on("SIGTERM", () => handler("SIGTERM"));
    },
    guard: guardProcess,
    exit: exitProcess,
  };
}

/** How often a closing server closes the keep-alive sockets that went idle since. */
const IDLE_SWEEP_MS = 25;

/**
 * Node's close() waits for every socket, and a keep-alive socket stays open (and keeps serving)
 * until its client stops. So: stop listening and close idle sockets now; responses not yet
 * started go out with `Connection: close` (the request tracker marks them while draining; Node
 * then ends the socket after them); a socket whose response had already started goes idle once it
 * finished, and is closed by the next sweep. Sweeping at shutdown costs nothing per request, where
 * following every response's 'close' cost a listener and a set entry each.
 */
function closeGracefully(server: Server): Promise<void> {
  return new Promise<void>((done) => {
    // One turn of the event loop first: requests already in the sockets' receive buffers are read
    // (and answered) rather than reset along with the socket they came on.
    setImmediate(() => {
      const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
      server.close(() => {
        clearInterval(sweep);
        done();
      });
      server.closeIdleConnections();
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await runCli(nodeHost(process.argv.slice(2)));
