import { setMaxListeners } from "node:events";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { smallBytes, streamed } from "../../runtime/mod.ts";
import type { ClientConnection, ClientConnections, DirectBody, Reply, Router } from "../../runtime/mod.ts";
import type { Socket } from "node:net";

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
 * Node's request listener: every request answered by the runtime's router straight from
 * `node:http`, no web `Request` or `Response` built (see router.ts for what that saves); the body
 * is read from the IncomingMessage itself (`NodeBody`, below).
 */
export function requestListener(router: Router, { drainsUnread = true }: ListenerOptions = {}): (incoming: IncomingMessage, outgoing: ServerResponse) => void {
  const drainMax = drainsUnread ? DRAIN_MAX_BYTES : 0;
  return (incoming, outgoing) => {
    const body = new NodeBody(incoming, outgoing);
    const headers = incoming.headers;
    const header = (name: string) => {
      const value = headers[name];
      return typeof value === "string" ? value : value?.join(", ");
    };
    router({ method: incoming.method ?? "GET", url: incoming.url ?? "/", header, body }).then(
      (r) => write(incoming, outgoing, body, r, drainMax),
      () => {
        // The router turns every error into a reply; this is only a guard against our own bug.
        if (!outgoing.headersSent) outgoing.writeHead(500, { "content-type": "application/json" });
        outgoing.end('{"error":"internal error"}');
      },
    );
  };
}

function write(incoming: IncomingMessage, outgoing: ServerResponse, body: NodeBody, reply: Reply, drainMax: number): void {
  const content = reply.body;
  if (outgoing.destroyed) {
    if (streamed(content)) void content.cancel().catch(() => {});
    return;
  }
  // Names and values in one flat list (writeHead takes that too): no object built per reply.
  const headers: (string | number)[] = [];
  for (const name in reply.headers) headers.push(name, reply.headers[name]!);
  // A stream's length is not known: node:http sends it chunked. A 204 has no length (RFC 9110 8.6).
  if (!streamed(content) && reply.status !== 204) headers.push("content-length", typeof content === "string" ? Buffer.byteLength(content) : content.byteLength);
  const closes = !body.ended && unreadMayExceed(incoming, drainMax);
  if (closes) headers.push("connection", "close");
  outgoing.writeHead(reply.status, headers as string[]);
  if (closes) linger(incoming, outgoing);
  if (streamed(content)) void pipe(content, outgoing);
  else outgoing.end(content);
}

/**
 * A streamed reply (Server-Sent Events) written as each chunk comes, each sent at once, waiting
 * while the socket's buffer is full. A client that goes away cancels the stream, which stops its
 * producer (a generation frees its sequence); a stream that fails cuts the connection, since the
 * status has gone.
 */
async function pipe(stream: ReadableStream<Uint8Array>, outgoing: ServerResponse): Promise<void> {
  const reader = stream.getReader();
  const gone = () => {
    if (!outgoing.writableFinished) void reader.cancel().catch(() => {});
  };
  outgoing.once("close", gone);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return void outgoing.end();
      if (outgoing.destroyed) return;
      if (!outgoing.write(value)) await drained(outgoing);
    }
  } catch {
    outgoing.destroy();
  } finally {
    outgoing.off("close", gone);
  }
}

/** Resolves when `outgoing` can take more, or is gone. */
function drained(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      outgoing.off("drain", done);
      outgoing.off("close", done);
      resolve();
    };
    outgoing.on("drain", done);
    outgoing.on("close", done);
  });
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

/** Whether a body not read may hold more than `limit` bytes: a larger declared length, or chunked. */
function unreadMayExceed(incoming: IncomingMessage, limit: number): boolean {
  if (incoming.headers["transfer-encoding"] !== undefined) return true;
  return Number(incoming.headers["content-length"] ?? 0) > limit;
}

/** Each reported socket's connection (`reportConnections` above), for the requests it carries. */
export const connections = new WeakMap<object, ClientConnection>();

export class NodeBody implements DirectBody {
  readonly #incoming: IncomingMessage;
  readonly #outgoing: ServerResponse;
  /** The whole declared body was taken from the stream's buffer (its 'end' may never be emitted then). */
  #whole = false;

  constructor(incoming: IncomingMessage, outgoing: ServerResponse) {
    this.#incoming = incoming;
    this.#outgoing = outgoing;
  }

  /**
   * Aborts when the connection closes. One signal per connection, not per request: an HTTP/1.1
   * client cannot drop one request and keep its connection, and building an AbortController per
   * request was about 4 % of the server's CPU in a profile under `simple` at 8 clients. A request answered
   * before the close has stopped listening by then.
   */
  get signal(): AbortSignal {
    if (this.#outgoing.closed) return AbortSignal.abort("Client connection prematurely closed.");
    return connectionSignal(this.#incoming);
  }

  get connection(): ClientConnection | undefined {
    return connections.get(this.#incoming.socket);
  }

  /** True once the whole body was read (Node needs nothing drained before the socket's next request). */
  get ended(): boolean {
    return this.#whole || this.#incoming.readableEnded;
  }

  /**
   * A small body has usually arrived whole by the time it is read: take it from the stream's
   * buffer now, without listeners and turns of events. Whole means the parser finished the
   * message, or the buffer holds every byte Content-Length declared: Node's parser calls back
   * into JS once per event (headers, body, message complete) with microtasks run in between, so
   * a body read after a few awaits usually finds all of its bytes buffered but `complete` not yet
   * set. (That case never sees 'end': nothing reads the stream again.)
   */
  take(limit: number): Uint8Array | undefined {
    const incoming = this.#incoming;
    if (incoming.readableEnded) return undefined;
    const buffered = incoming.readableLength;
    const declared = incoming.headers["content-length"];
    if (incoming.readableFlowing || buffered > limit || !(incoming.complete || (declared !== undefined && buffered === Number(declared)))) return undefined;
    this.#whole = true;
    const first = incoming.read() as Buffer | null;
    if (first === null) return new Uint8Array();
    if (first.byteLength === buffered) return plain(first);
    const body = smallBytes(buffered);
    body.set(first);
    let at = first.byteLength;
    for (let chunk: Buffer | null; at < buffered && (chunk = incoming.read() as Buffer | null) !== null; at += chunk.byteLength) body.set(chunk, at);
    return at === buffered ? body : body.subarray(0, at);
  }

  read(limit: number): Promise<Uint8Array | undefined> {
    const incoming = this.#incoming;
    if (incoming.readableEnded) return Promise.resolve(new Uint8Array());
    const whole = this.take(limit);
    if (whole) return Promise.resolve(whole);
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        incoming.off("data", onData);
        incoming.off("end", onEnd);
        incoming.off("error", onError);
        incoming.off("close", onClose);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > limit) {
          // Stop reading; the answer's writer drains (or closes) the rest once the 413 is sent.
          done();
          incoming.pause();
          resolve(undefined);
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = () => {
        done();
        if (chunks.length === 1) return resolve(plain(chunks[0]!));
        const body = smallBytes(size);
        let at = 0;
        for (const c of chunks) {
          body.set(c, at);
          at += c.byteLength;
        }
        resolve(body);
      };
      const onError = (error: Error) => {
        done();
        reject(error);
      };
      const onClose = () => {
        done();
        reject(new Error("aborted"));
      };
      incoming.on("data", onData);
      incoming.on("end", onEnd);
      incoming.on("error", onError);
      incoming.on("close", onClose);
    });
  }
}

/**
 * A chunk as a plain `Uint8Array` over the same memory: no copy (Node's parser copies each body
 * chunk out of its read buffer already), and none of `Buffer`'s differences downstream (its
 * `slice()` is a view, not a copy). Whether a backend may transfer the memory to a worker is
 * `transferables`' rule: only a view that owns its whole buffer moves.
 */
function plain(chunk: Buffer): Uint8Array {
  return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

const signals = new WeakMap<object, AbortSignal>();

function connectionSignal(incoming: IncomingMessage): AbortSignal {
  const socket = incoming.socket;
  let signal = signals.get(socket);
  if (signal) return signal;
  const abort = new AbortController();
  signal = abort.signal;
  // Every live batcher a request of this connection waited in listens once (they take it off when they
  // stop), so a gateway's connection to many functions has many; Node's warning at 11 is not a leak here.
  setMaxListeners(0, signal);
  signals.set(socket, signal);
  socket.once("close", () => abort.abort(incoming.errored ? incoming.errored.toString() : "Client connection prematurely closed."));
  return signal;
}
