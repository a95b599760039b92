import { Metadata, Server, ServerCredentials } from "@grpc/grpc-js";
import type { ServerDuplexStream, ServerUnaryCall, ServerWritableStream, ServiceDefinition, sendUnaryData, UntypedHandleCall } from "@grpc/grpc-js";
import { constants as http2 } from "node:http2";
import type { Http2Server, Http2Session, Http2Stream } from "node:http2";
import { createServer as createNetServer } from "node:net";
import type { Socket } from "node:net";
import type { GrpcCall, GrpcMethod, GrpcService } from "../runtime/grpc/mod.ts";
import { RuntimeError } from "../runtime/mod.ts";
import { PushQueue } from "../runtime/core/mod.ts";
import type { ConnectionLimits, Listener } from "./host.ts";
import { CHECK_INTERVAL_MS, followOutput } from "./output-stall.ts";
import { RELEASED_BYTES } from "./collect-after-release.ts";
import type { Waiting } from "./output-stall.ts";

// @grpc/grpc-js puts the runtime's gRPC methods on a port. It runs on node:http2, which Node, Bun
// and Deno all serve (test/e2e/grpc.test.ts runs under each), so one adapter serves all three.

/** The bounds of the gRPC port's connections: HTTP's (`ConnectionLimits`) and two of HTTP/2's own. */
export interface GrpcLimits extends ConnectionLimits {
  /** A connection with no call for this long is told to go (GOAWAY) and closed; its client reconnects when it needs to. */
  idleTimeoutMs: number;
  /** Answer bytes one connection may hold unsent (`--max-answer-buffer`); a stream that would pass it is cancelled. */
  maxBufferedBytes: number;
}

/** What the gRPC port holds its connections to unless told otherwise (the CLI's defaults). */
export const DEFAULT_GRPC_LIMITS: GrpcLimits = {
  requestTimeoutMs: 30_000,
  writeTimeoutMs: 30_000,
  maxConnections: 8192,
  idleTimeoutMs: 300_000,
  maxBufferedBytes: 256 * 1024 * 1024,
};


/**
 * Serves `service` on `hostname:port` (0: any free port). Messages up to the server's
 * `--max-input-size` are read (gRPC's default of 4 MiB would refuse what HTTP accepts, triton#1776);
 * answers of any size are sent. The port holds its connections to `limits`, as HTTP's are
 * (`dropped` hears of each connection dropped, for tensorfn_connections_dropped_total).
 * `close` refuses new calls and resolves once the calls in flight are done.
 */
export async function serveGrpc(
  service: GrpcService,
  options: { hostname: string; port: number; limits?: GrpcLimits; dropped?: (message: string) => void; released?: () => void },
): Promise<Listener & { port: number }> {
  const limits = options.limits ?? DEFAULT_GRPC_LIMITS;
  const server = new Server({
    "grpc.max_receive_message_length": service.maxMessageBytes,
    "grpc.max_send_message_length": -1,
    // A client's keepalive pings, as often as every 10 s, are answered rather than punished.
    "grpc.http2.min_ping_interval_without_data_ms": 10_000,
    "grpc.max_connection_idle_ms": limits.idleTimeoutMs,
  });
  const definition: Record<string, ServiceDefinition[string]> = {};
  const handlers: Record<string, UntypedHandleCall> = {};
  for (const method of service.methods) {
    const key = method.path;
    definition[key] = {
      path: method.path,
      requestStream: method.requestStream,
      responseStream: method.responseStream,
      // Requests are decoded by the handler, where a malformed one is answered INVALID_ARGUMENT
      // (grpc-js answers a throw while deserializing INTERNAL).
      requestSerialize: (message: Buffer) => message,
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: (message: unknown) => {
        const bytes = method.encode(message);
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      },
      responseDeserialize: (bytes: Buffer) => bytes,
    };
    handlers[key] = handlerFor(service, method);
  }
  server.addService(definition, handlers);
  // Our own listener hands grpc-js its connections: so the port holds them as HTTP's are held.
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  const connections = new ConnectionWatch(limits, options.dropped ?? (() => {}), http2ServerOf(server), options.released);
  const listener = createNetServer((socket) => connections.admit(socket, () => injector.injectConnection(socket)));
  const host = options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname;
  const port = await new Promise<number>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(options.port, options.hostname, () => {
      listener.off("error", reject);
      const address = listener.address();
      resolve(typeof address === "object" && address ? address.port : options.port);
    });
  });
  return {
    url: `${host}:${port}`,
    port,
    close: async () => {
      // No new connections; grpc-js tells each open one to go (GOAWAY) once its calls are done.
      const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      connections.stop();
      await closed;
    },
  };
}

/**
 * The node:http2 server grpc-js made for the connection injector: its sessions are what the limits
 * watch. grpc-js keeps it in a private map; a version that no longer does fails here, at start.
 */
function http2ServerOf(server: Server): Http2Server {
  const servers = (server as unknown as { http2Servers?: Map<Http2Server, unknown> }).http2Servers;
  const made = servers && [...servers.keys()].at(-1);
  if (!made || typeof made.on !== "function") throw new Error("@grpc/grpc-js no longer keeps its HTTP/2 servers where tensorfn looks: the gRPC port cannot hold its connections to their limits");
  return made;
}

/** What the watch keeps of one connection. */
interface Watched {
  socket: Socket;
  session?: Http2Session;
  streams: Set<Http2Stream>;
  /** Answer bytes waiting at the last sweep (output-stall.ts). */
  waiting?: Waiting;
  opened: number;
}

/**
 * Holds the gRPC port's connections to their limits — what a client that connects and never
 * speaks, or speaks and never reads (an HTTP/2 window of 0), would otherwise take from everyone:
 * - past `maxConnections` open connections a new one is closed at once;
 * - a connection must send its first bytes within `requestTimeoutMs`;
 * - a connection whose answers stop being taken for `writeTimeoutMs` is destroyed, and what it
 *   held released;
 * - answer bytes a connection holds unsent are bounded by `maxBufferedBytes`: a write that would
 *   pass it cancels its stream (RST_STREAM ENHANCE_YOUR_CALM, which gRPC clients read as
 *   RESOURCE_EXHAUSTED) and the bytes that stream held are freed.
 * Each connection dropped is reported to `dropped`; each gone (dropped or left) while it held a
 * megabyte or more of answers unsent, to `released` (collect-after-release.ts).
 */
class ConnectionWatch {
  readonly #limits: GrpcLimits;
  readonly #dropped: (message: string) => void;
  readonly #released?: () => void;
  readonly #open = new Map<Socket, Watched>();
  readonly #sweep: ReturnType<typeof setInterval>;
  /** The connection being handed to grpc-js: its session is made as it is (session.socket is only a proxy of it). */
  #injecting?: Watched;

  constructor(limits: GrpcLimits, dropped: (message: string) => void, http2Server: Http2Server, released?: () => void) {
    this.#limits = limits;
    this.#dropped = dropped;
    this.#released = released;
    http2Server.on("session", (session: Http2Session) => {
      const watched = this.#injecting ?? [...this.#open.values()].find((w) => !w.session && w.socket.remotePort === session.socket?.remotePort && w.socket.remoteAddress === session.socket?.remoteAddress);
      if (!watched) return;
      watched.session = session;
      session.on("stream", (stream: Http2Stream) => this.#bound(watched, stream));
    });
    this.#sweep = setInterval(() => this.#check(Date.now()), CHECK_INTERVAL_MS);
    this.#sweep.unref();
  }

  /** Serves a new connection through `inject` (grpc-js), or closes it at once past the limit. */
  admit(socket: Socket, inject: () => void): void {
    if (this.#open.size >= this.#limits.maxConnections) {
      this.#dropped(`closed a gRPC connection from ${socket.remoteAddress} at once: ${this.#limits.maxConnections} are open, the limit (--max-connections)`);
      socket.destroy();
      return;
    }
    const watched: Watched = { socket, streams: new Set(), opened: Date.now() };
    this.#open.set(socket, watched);
    socket.once("close", () => {
      this.#open.delete(socket);
      if (Math.max(watched.waiting?.bytes ?? 0, this.#unsent(watched)) >= RELEASED_BYTES) this.#released?.();
    });
    // A client that resets its connection is no error of the server's.
    socket.on("error", () => {});
    this.#injecting = watched;
    try {
      inject();
    } finally {
      this.#injecting = undefined;
    }
  }

  stop(): void {
    clearInterval(this.#sweep);
  }

  /** Each write of `stream` checked against the connection's unsent bytes before it is taken. */
  #bound(watched: Watched, stream: Http2Stream): void {
    watched.streams.add(stream);
    stream.once("close", () => watched.streams.delete(stream));
    const write = stream.write;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const size = typeof chunk === "string" ? Buffer.byteLength(chunk) : ArrayBuffer.isView(chunk) ? chunk.byteLength : 0;
      const held = this.#unsent(watched);
      if (held + size > this.#limits.maxBufferedBytes && !stream.destroyed) {
        this.#dropped(`cancelled a gRPC stream from ${watched.socket.remoteAddress}: its connection would hold ${held + size} bytes of answers unsent, over ${this.#limits.maxBufferedBytes} (--max-answer-buffer)`);
        stream.close(http2.NGHTTP2_ENHANCE_YOUR_CALM);
        const callback = rest.find((r) => typeof r === "function") as ((error?: Error) => void) | undefined;
        callback?.(new Error("the stream was cancelled: its connection holds too many unsent answer bytes"));
        return false;
      }
      return (write as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
  }

  /** Bytes a connection holds for its client: written to its streams, not yet sent. */
  #unsent(watched: Watched): number {
    let bytes = watched.socket.writableLength;
    for (const stream of watched.streams) bytes += stream.writableLength;
    return bytes;
  }

  #check(now: number): void {
    for (const watched of this.#open.values()) {
      const { socket } = watched;
      if (socket.bytesRead === 0 && now - watched.opened > this.#limits.requestTimeoutMs) {
        this.#drop(watched, `it sent nothing for ${Math.round((now - watched.opened) / 1000)} s (--request-body-timeout)`);
        continue;
      }
      const { waiting, stalled } = followOutput(watched.waiting, this.#unsent(watched), now, this.#limits.writeTimeoutMs);
      watched.waiting = waiting;
      if (stalled) this.#drop(watched, stalled);
    }
  }

  #drop(watched: Watched, why: string): void {
    this.#dropped(`dropped a gRPC connection from ${watched.socket.remoteAddress}: ${why}`);
    this.#open.delete(watched.socket);
    watched.session?.destroy();
    watched.socket.destroy();
  }
}

type AnyCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>;

/** A send to a call its client has left: the client's doing (CANCELLED), not an error of the server's to log. */
function clientGone(): RuntimeError {
  return new RuntimeError("CANCELLED", "the client cancelled the call");
}

function handlerFor(service: GrpcService, method: GrpcMethod): UntypedHandleCall {
  if (method.unary) {
    const handle = method.unary;
    return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      Promise.resolve()
        .then(() => handle(method.decode(call.request as Buffer), new CallContext(call)))
        .then(
          (response) => callback(null, response),
          (error) => callback(toStatus(service, error)),
        );
    };
  }
  const handle = method.stream!;
  return (call: ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>) => {
    const requests = decoded(method, method.requestStream ? messages(call as ServerDuplexStream<Buffer, unknown>) : [(call as ServerWritableStream<Buffer, unknown>).request]);
    // Settles once the message may be followed by another, or as soon as the call is gone: a
    // cancelled stream never drains. The sends held by backpressure (up to STREAM_IN_FLIGHT) wait
    // on one promise per call, not a listener each.
    let writable: Promise<void> | undefined;
    const gone = () => call.cancelled || call.destroyed;
    const drained = () =>
      (writable ??= new Promise<void>((resolve, reject) => {
        const settle = (error?: Error) => {
          call.off("drain", onDrain);
          call.off("cancelled", onGone);
          call.off("close", onGone);
          writable = undefined;
          if (error) reject(error);
          else resolve();
        };
        const onDrain = () => settle();
        const onGone = () => settle(clientGone());
        call.once("drain", onDrain);
        call.once("cancelled", onGone);
        call.once("close", onGone);
      }));
    const send = async (message: unknown) => {
      if (gone()) throw clientGone();
      if (!call.write(message)) await drained();
    };
    handle(requests as AsyncIterable<unknown>, send, new CallContext(call)).then(
      () => call.end(),
      // grpc-js sends an 'error' emitted on a server stream as the call's status.
      (error) => call.emit("error", toStatus(service, error)),
    );
  };
}

/**
 * The messages a client streams, read as they are taken: the call is paused while one waits
 * (HTTP/2 flow control then holds the client). Not `for await` on the call itself: that destroys
 * the duplex at the end of the client's messages, and with it the answers still to be written.
 */
async function* messages(call: ServerDuplexStream<Buffer, unknown>): AsyncIterable<Buffer> {
  const queue = new PushQueue<Buffer>();
  call.on("data", (message: Buffer) => {
    queue.push(message);
    call.pause();
  });
  call.once("end", () => queue.end());
  call.once("error", (error) => queue.end(error));
  call.once("cancelled", () => queue.end());
  for await (const message of queue.read()) {
    yield message;
    if (queue.length === 0) call.resume();
  }
}

async function* decoded(method: GrpcMethod, messages: AsyncIterable<Buffer> | Iterable<Buffer>): AsyncIterable<unknown> {
  for await (const bytes of messages) yield method.decode(bytes);
}

/**
 * What a method sees of a grpc-js call: its metadata as headers (the authority as `host`) and a
 * signal, built when first read (most calls never wait on it: a controller per call is measurable).
 */
class CallContext implements GrpcCall {
  readonly #call: AnyCall;
  #controller: AbortController | undefined;
  #cancelled = false;

  constructor(call: AnyCall) {
    this.#call = call;
    (call as ServerUnaryCall<unknown, unknown>).once("cancelled", () => {
      this.#cancelled = true;
      this.#controller?.abort(new Error("the client cancelled the call"));
    });
  }

  readonly header = (name: string): string | undefined => {
    if (name === "host") return this.#call.getHost();
    const value = this.#call.metadata.get(name)[0];
    return value === undefined ? undefined : String(value);
  };

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#cancelled) this.#controller.abort(new Error("the client cancelled the call"));
    }
    return this.#controller.signal;
  }
}

function toStatus(service: GrpcService, error: unknown): { code: number; details: string; metadata: Metadata } {
  const { code, details, retryAfterMs } = service.failure(error);
  const metadata = new Metadata();
  if (retryAfterMs !== undefined) metadata.set("retry-after", String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
  return { code, details, metadata };
}
