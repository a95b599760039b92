import { setMaxListeners } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2Bindings, HttpBindings } from "@hono/node-server";
import { smallBytes } from "../../runtime/mod.ts";
import type { ClientConnection, DirectBody, ServeEnv } from "../../runtime/mod.ts";

type Fetch = (request: Request, env?: ServeEnv) => Response | Promise<Response>;

/**
 * The fetch handler @hono/node-server should call: the same handler, given a `DirectBody` that
 * reads the IncomingMessage itself. Its web-stream bridge (`Readable.toWeb` behind
 * `request.arrayBuffer()`, built as soon as `request.signal` or `body` is touched) is what a small
 * request paid most for; the runtime uses this instead wherever it is given.
 */
export function withDirectBody(fetch: Fetch) {
  // HTTP/2's request and response have the same stream and event API for what NodeBody uses.
  return (request: Request, node: HttpBindings | Http2Bindings) =>
    fetch(request, { directBody: new NodeBody(node.incoming as IncomingMessage, node.outgoing as ServerResponse) });
}

/** Each reported socket's connection (request-listener.ts `reportConnections`), for the requests it carries. */
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
          // Stop reading; @hono/node-server drains (or closes) the rest once the 413 is sent.
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
