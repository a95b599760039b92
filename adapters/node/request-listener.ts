import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import type { ClientConnections, FastLane, Reply, ServeEnv } from "../../runtime/mod.ts";
import { connections, NodeBody, withDirectBody } from "./direct-body.ts";
import type { Socket } from "node:net";

type Fetch = (request: Request, env?: ServeEnv) => Response | Promise<Response>;

/**
 * A body left unread larger than this (or of unknown length) closes the connection after the
 * reply instead of being read and dropped: a 503 to a 50 MB upload should not cost 50 MB of reading.
 */
const DRAIN_MAX_BYTES = 1024 * 1024;

/**
 * `drainsUnread: false` where the server does not read and drop a body the answer left unread
 * (Deno's and Bun's node:http: the connection's next request is reset); then every answer that
 * leaves one closes its connection.
 */
export interface ListenerOptions {
  drainsUnread?: boolean;
}

/**
 * Tells the runtime of each client connection of `server` opening and closing, so its batchers know
 * when every open connection already carries a request (runtime/call/client-connections.ts). One
 * listener per connection, none per request.
 */
export function reportConnections(server: Server, clients: ClientConnections): void {
  server.on("connection", (socket: Socket) => {
    const connection = clients.opened();
    connections.set(socket, connection);
    socket.once("close", () => clients.closed(connection));
  });
}

/**
 * Node's request listener: the runtime's fast lane (inference, health) answered straight on
 * `node:http`, everything else through @hono/node-server to the app. The lane never sees a web
 * `Request` or `Response`; that is where its CPU saving comes from (see fast-lane.ts).
 */
export function requestListener(fetch: Fetch, lane?: FastLane, { drainsUnread = true }: ListenerOptions = {}): (incoming: IncomingMessage, outgoing: ServerResponse) => void {
  const hono = getRequestListener(withDirectBody(fetch));
  const app = drainsUnread ? hono : closingUnread(hono);
  const drainMax = drainsUnread ? DRAIN_MAX_BYTES : 0;
  if (!lane) return app;
  return (incoming, outgoing) => {
    const body = new NodeBody(incoming, outgoing);
    const headers = incoming.headers;
    const header = (name: string) => {
      const value = headers[name];
      return typeof value === "string" ? value : value?.join(", ");
    };
    const reply = lane({ method: incoming.method ?? "GET", url: incoming.url ?? "/", header, body });
    if (!reply) return void app(incoming, outgoing);
    reply.then(
      (r) => write(incoming, outgoing, body, r, drainMax),
      () => {
        // The lane turns every error into a reply; this is only a guard against our own bug.
        if (!outgoing.headersSent) outgoing.writeHead(500, { "content-type": "application/json" });
        outgoing.end('{"error":"internal error"}');
      },
    );
  };
}

function write(incoming: IncomingMessage, outgoing: ServerResponse, body: NodeBody, reply: Reply, drainMax: number): void {
  if (outgoing.destroyed) return;
  const length = typeof reply.body === "string" ? Buffer.byteLength(reply.body) : reply.body.byteLength;
  // Names and values in one flat list (writeHead takes that too): no object built per reply.
  const headers: (string | number)[] = [];
  for (const name in reply.headers) headers.push(name, reply.headers[name]!);
  headers.push("content-length", length);
  const closes = !body.ended && unreadMayExceed(incoming, drainMax);
  if (closes) headers.push("connection", "close");
  outgoing.writeHead(reply.status, headers as string[]);
  if (closes) linger(incoming, outgoing);
  outgoing.end(reply.body);
}

/** How long a connection answered before its body arrived keeps reading (and dropping) it before it closes. */
const LINGER_MS = 2000;

/**
 * node:http closes a `Connection: close` answer's socket as soon as the answer is out: with the
 * client's bytes unread, that resets the connection, and a client still sending its body sees
 * EPIPE instead of the answer (a 50 MB upload refused after its first MB: every time under Node,
 * most times under Deno and Bun's node:http). So the socket stays open a while, reading and
 * dropping what arrives (a lingering close, as nginx does), and closes when the client does or at
 * LINGER_MS.
 */
function linger(incoming: IncomingMessage, outgoing: ServerResponse): void {
  (outgoing as unknown as { _last: boolean })._last = false;
  incoming.resume();
  outgoing.once("finish", () => {
    const socket = incoming.socket;
    socket.on("data", () => {}).resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}

/** `listener`, its answers marked `Connection: close` when written before the request's body ended. */
function closingUnread(listener: (incoming: IncomingMessage, outgoing: ServerResponse) => void) {
  return (incoming: IncomingMessage, outgoing: ServerResponse) => {
    if (unreadMayExceed(incoming, 0)) {
      const writeHead = outgoing.writeHead;
      outgoing.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
        if (!incoming.complete) this.setHeader("connection", "close");
        return writeHead.apply(this, args);
      } as ServerResponse["writeHead"];
    }
    listener(incoming, outgoing);
  };
}

/** Whether a body not read may hold more than `limit` bytes: a larger declared length, or chunked. */
function unreadMayExceed(incoming: IncomingMessage, limit: number): boolean {
  if (incoming.headers["transfer-encoding"] !== undefined) return true;
  return Number(incoming.headers["content-length"] ?? 0) > limit;
}
