import { watch as fsWatch } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { Server as NetServer } from "node:net";
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

/**
 * Stops accepting connections and resolves once every socket has closed, closing none that is
 * idle: a client may be sending its next request on it this very moment, and closing it would
 * reset that request unanswered (HTTP/1.1 has no way to warn a keep-alive client). Instead each
 * socket closes when its client has been told: its next request is answered with
 * `Connection: close` (the request tracker marks every response while draining; Node then ends
 * the socket after it), or it reaches its keep-alive timeout, which Node announces in every
 * response (`Keep-Alive: timeout=5`) so clients stop reusing a socket before it — Node closes it
 * then as it always does. `--shutdown-timeout` bounds the whole wait.
 */
function closeGracefully(server: Server): Promise<void> {
  // http.Server#close also closes idle sockets (Node ≥ 19): net.Server#close only stops listening.
  return new Promise<void>((done) => void NetServer.prototype.close.call(server, () => done()));
}

if (import.meta.url === `file://${process.argv[1]}`) await runCli(nodeHost(process.argv.slice(2)));
