import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { isProbe } from "../../runtime/mod.ts";
import type { ConnectionLimits } from "../host.ts";
import { CHECK_INTERVAL_MS, followOutput } from "../output-stall.ts";
import type { Waiting } from "../output-stall.ts";
import { RELEASED_BYTES } from "../collect-after-release.ts";

/** Connections past `maxConnections` that are still let in, answered 503 (probes served): past these they are closed at once. */
export const PROBE_ROOM = 64;


/** A connection's request as the sweep follows it (`holdsRequestTimeout: false`). */
interface Reading {
  /** The request being read, and its answer. */
  request?: IncomingMessage;
  response?: ServerResponse;
  /** Bytes the connection had read when its last request was whole. */
  consumed: number;
  /** Since when a request has been arriving. */
  since?: number;
}

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
 * `holdsRequestTimeout: false` where the server does not enforce requestTimeout and headersTimeout
 * (Bun's node:http): then the sweep below does, from the bytes each connection read.
 */
export function limitConnections(
  server: Server,
  limits: ConnectionLimits,
  warn: (message: string) => void,
  { holdsRequestTimeout = true, released }: { holdsRequestTimeout?: boolean; released?: () => void } = {},
): { guard(listener: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void; stop(): void } {
  server.requestTimeout = limits.requestTimeoutMs;
  server.headersTimeout = Math.min(server.headersTimeout, limits.requestTimeoutMs);
  const open = new Set<Socket>();
  const excess = new WeakSet<Socket>();
  // Per connection with output waiting: how much was waiting at the last check, and since when none of it was taken.
  const waiting = new WeakMap<Socket, Waiting>();
  // Per connection, where the sweep holds the request timeout.
  const reading = new WeakMap<Socket, Reading>();
  server.on("connection", (socket: Socket) => {
    if (open.size >= limits.maxConnections + PROBE_ROOM) return void socket.destroy();
    if (open.size >= limits.maxConnections) excess.add(socket);
    open.add(socket);
    if (!holdsRequestTimeout) reading.set(socket, { consumed: 0 });
    socket.once("close", () => {
      open.delete(socket);
      // Gone (dropped or left) with answers unsent: what it held is garbage now (collect-after-release.ts).
      if (Math.max(waiting.get(socket)?.bytes ?? 0, socket.writableLength) >= RELEASED_BYTES) released?.();
    });
  });
  // A slow client that reads keeps its connection (what waits shrinks); one that stops reading loses it.
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const socket of open) {
      const read = reading.get(socket);
      if (read && overdue(socket, read, now)) continue;
      const { waiting: next, stalled } = followOutput(waiting.get(socket), socket.writableLength, now, limits.writeTimeoutMs);
      if (stalled) {
        warn(`dropped a connection from ${socket.remoteAddress}: ${stalled}`);
        socket.destroy();
      } else if (next) waiting.set(socket, next);
      else waiting.delete(socket);
    }
  }, CHECK_INTERVAL_MS);
  sweep.unref();
  /** A head or body arriving for longer than the request timeout: 408 (when nothing was answered yet) and closed. */
  const overdue = (socket: Socket, read: Reading, now: number): boolean => {
    if (read.request?.complete) {
      read.consumed = socket.bytesRead;
      read.request = read.response = undefined;
    }
    if (!read.request && socket.bytesRead <= read.consumed) {
      read.since = undefined;
      return false;
    }
    read.since ??= now;
    if (now - read.since <= limits.requestTimeoutMs) return false;
    const body = JSON.stringify({ error: `Request Timeout: the request did not arrive within ${limits.requestTimeoutMs / 1000} s (--request-body-timeout)` });
    if (!read.response?.headersSent) socket.end(`HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    setTimeout(() => socket.destroy(), 100).unref();
    open.delete(socket);
    return true;
  };
  return {
    guard: (listener) => (req, res) => {
      const read = reading.get(req.socket);
      if (read) Object.assign(read, { request: req, response: res });
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
