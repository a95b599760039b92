import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { isProbe } from "../../runtime/mod.ts";
import type { ConnectionLimits } from "../host.ts";

/** Connections past `maxConnections` that are still let in, answered 503 (probes served): past these they are closed at once. */
export const PROBE_ROOM = 64;

/** How often the request and write deadlines are checked (Node checks requestTimeout at its own interval). */
export const CHECK_INTERVAL_MS = 1000;

/**
 * Holds `server`'s connections to `limits` — what a client that sends slowly, never reads, or
 * opens connections without end would otherwise take from everyone (file descriptors, memory):
 * - the head and body of a request must arrive within `requestTimeoutMs` (Node's requestTimeout,
 *   checked every second: 408, connection closed), the head alone within the same;
 * - a connection whose output stops draining for `writeTimeoutMs` is destroyed, and the answers
 *   it held released (a client that never reads pinned 32 MB answers indefinitely);
 * - past `maxConnections` open connections, each new one is answered 503 with `Connection: close`
 *   (health probes still answered normally), and past `maxConnections + PROBE_ROOM` closed at once.
 * Returns the listener wrapper that answers the excess, and a function that stops the checks.
 * The server must have been created with `connectionsCheckingInterval: CHECK_INTERVAL_MS`.
 */
export function limitConnections(
  server: Server,
  limits: ConnectionLimits,
  warn: (message: string) => void,
): { guard(listener: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void; stop(): void } {
  server.requestTimeout = limits.requestTimeoutMs;
  server.headersTimeout = Math.min(server.headersTimeout, limits.requestTimeoutMs);
  const open = new Set<Socket>();
  const excess = new WeakSet<Socket>();
  // Per connection with output waiting: how much was waiting at the last check, and since when none of it was taken.
  const waiting = new WeakMap<Socket, { bytes: number; since: number }>();
  server.on("connection", (socket: Socket) => {
    if (open.size >= limits.maxConnections + PROBE_ROOM) return void socket.destroy();
    if (open.size >= limits.maxConnections) excess.add(socket);
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  // A slow client that reads keeps its connection (what waits shrinks); one that stops reading loses it.
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const socket of open) {
      const bytes = socket.writableLength;
      const last = waiting.get(socket);
      if (bytes === 0) waiting.delete(socket);
      else if (!last || bytes < last.bytes) waiting.set(socket, { bytes, since: now });
      else if (now - last.since > limits.writeTimeoutMs) {
        warn(`dropped a connection from ${socket.remoteAddress}: ${bytes} bytes of its answers untaken for ${Math.round((now - last.since) / 1000)} s (--write-timeout)`);
        socket.destroy();
      }
      else last.bytes = bytes;
    }
  }, CHECK_INTERVAL_MS);
  sweep.unref();
  return {
    guard: (listener) => (req, res) => {
      if (!excess.has(req.socket) || isProbe(req.url ?? "")) return listener(req, res);
      // Room again since it connected (a probe's keep-alive connection, reused): served as any other.
      if (open.size <= limits.maxConnections) {
        excess.delete(req.socket);
        return listener(req, res);
      }
      const body = JSON.stringify({ error: `the server has ${limits.maxConnections} connections open, its limit (--max-connections): try again` });
      res.writeHead(503, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close", "retry-after": "1" });
      res.end(body);
    },
    stop: () => clearInterval(sweep),
  };
}
