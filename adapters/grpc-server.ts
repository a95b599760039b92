import { Metadata, Server, ServerCredentials } from "@grpc/grpc-js";
import type { ServerDuplexStream, ServerUnaryCall, ServerWritableStream, ServiceDefinition, sendUnaryData, UntypedHandleCall } from "@grpc/grpc-js";
import type { GrpcCall, GrpcMethod, GrpcService } from "../runtime/grpc/mod.ts";
import type { Listener } from "./host.ts";

// @grpc/grpc-js puts the runtime's gRPC methods on a port. It runs on node:http2, which Node, Bun
// and Deno all serve (test/e2e/grpc.test.ts runs under each), so one adapter serves all three.

/**
 * Serves `service` on `hostname:port` (0: any free port). Messages up to the server's
 * `--max-input-size` are read (gRPC's default of 4 MiB would refuse what HTTP accepts, triton#1776);
 * answers of any size are sent. `close` refuses new calls and resolves once the calls in flight are done.
 */
export async function serveGrpc(service: GrpcService, options: { hostname: string; port: number }): Promise<Listener & { port: number }> {
  const server = new Server({
    "grpc.max_receive_message_length": service.maxMessageBytes,
    "grpc.max_send_message_length": -1,
    // A client's keepalive pings, as often as every 10 s, are answered rather than punished.
    "grpc.http2.min_ping_interval_without_data_ms": 10_000,
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
  const host = options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${options.port}`, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    url: `${host}:${port}`,
    port,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

type AnyCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>;

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
    const send = (message: unknown) =>
      new Promise<void>((resolve) => {
        if (call.write(message)) resolve();
        else call.once("drain", () => resolve());
      });
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
  const queue: Buffer[] = [];
  let ended = false;
  let failed: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  call.on("data", (message: Buffer) => {
    queue.push(message);
    call.pause();
    notify();
  });
  call.once("end", () => ((ended = true), notify()));
  call.once("error", (error) => ((failed = error), notify()));
  call.once("cancelled", () => ((ended = true), notify()));
  for (;;) {
    if (queue.length > 0) {
      yield queue.shift()!;
      if (queue.length === 0) call.resume();
      continue;
    }
    if (failed !== undefined) throw failed;
    if (ended) return;
    await new Promise<void>((resolve) => (wake = resolve));
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
