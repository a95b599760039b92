import { createServer } from "node:http";
import { createServer as createNetServer, Server as NetServer } from "node:net";
import type { Server } from "node:http";
import { repeatedLine, systemClock } from "../../runtime/core/mod.ts";
import type { Logger } from "../../runtime/mod.ts";
import type { Host, Listener } from "../host.ts";
import { answerClientErrors } from "./client-error.ts";
import { limitConnections } from "./connection-limits.ts";
import { CHECK_INTERVAL_MS } from "../output-stall.ts";
import { collectAfterRelease } from "../collect-after-release.ts";
import { reportConnections, requestListener } from "./request-listener.ts";

/**
 * `Host.serve` on `node:http`: the runtime's router answers every request on it directly;
 * connection limits and connection reports; a close that drains (below).
 * Node's host, and Deno's, whose `node:http` is a `net.Server` too and drains the same way.
 * `ownListener`: a `node:net` server listens and hands its connections to the HTTP server, whose
 * close then stops only that listener (Bun's HTTP server closes idle sockets on its own close).
 * `drainsUnread`: requestListener's option (false for Deno's and Bun's node:http). `collect`: a full
 * garbage collection, run soon after a connection holding unsent answers goes (collect-after-release.ts).
 */
export function serveNodeHttp(log: Logger, { ownListener = false, drainsUnread = true, collect }: { ownListener?: boolean; drainsUnread?: boolean; collect?: () => void } = {}): Host["serve"] {
  const released = collectAfterRelease(collect);
  return (router, { hostname, port, clients, limits }) =>
    new Promise<Listener>((resolve, reject) => {
      const listener = requestListener(router, { drainsUnread });
      const server: Server = createServer({ connectionsCheckingInterval: CHECK_INTERVAL_MS });
      // Bun's node:http, handed its connections, holds no request timeout itself (measured on Bun 1.4).
      // A drop is a client's doing, and clients can cause many: counted, and logged one line per 10 s with the count.
      const dropLine = repeatedLine((message) => log.warn(message), systemClock);
      const dropped = (message: string) => {
        clients?.dropped();
        dropLine(message);
      };
      const limited = limits && limitConnections(server, limits, dropped, { holdsRequestTimeout: !ownListener, released });
      server.on("request", limited ? limited.guard(listener) : listener);
      server.on("close", () => limited?.stop());
      if (clients) reportConnections(server, clients);
      const listening: NetServer | Server = ownListener ? createNetServer((socket) => server.emit("connection", socket)) : server;
      // A port taken or an address not ours fails the start (the CLI exits naming it), never later as a stray error.
      listening.once("error", reject);
      listening.listen(port, hostname, () => {
        listening.off("error", reject);
        const address = listening.address();
        resolve({
          url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${typeof address === "object" && address ? address.port : port}`,
          close: () => (ownListener ? new Promise<void>((done) => void listening.close(() => done())) : closeGracefully(server)),
        });
      });
      answerClientErrors(server);
    });
}

/**
 * Stops accepting connections and resolves once every socket has closed, closing none that is
 * idle: a client may be sending its next request on it this very moment, and closing it would
 * reset that request unanswered (HTTP/1.1 has no way to warn a keep-alive client). Instead each
 * socket closes when its client has been told: its next request is answered with
 * `Connection: close` (the request tracker marks every response while draining; the server then
 * ends the socket after it), or it reaches its keep-alive timeout, which Node announces in every
 * response (`Keep-Alive: timeout=5`) so clients stop reusing a socket before it — the server
 * closes it then as it always does. `--shutdown-timeout` bounds the whole wait.
 */
function closeGracefully(server: Server): Promise<void> {
  // http.Server#close also closes idle sockets (Node ≥ 19): net.Server#close only stops listening.
  return new Promise<void>((done) => void NetServer.prototype.close.call(server, () => done()));
}
