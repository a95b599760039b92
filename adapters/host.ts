import type { ClientConnections, EscapeKind, Platform, Router } from "../runtime/mod.ts";
import type { ShutdownSignal } from "./graceful-shutdown.ts";

/** The bounds a client connection is held to (`serve` flags; docs/guides/security.md), where the adapter holds the sockets. */
export interface ConnectionLimits {
  /** A request's head and body must have arrived within this (`--request-body-timeout`); then 408 and the connection closes. */
  requestTimeoutMs: number;
  /** A connection whose answers stop being taken for this long is dropped, and what it held released (`--write-timeout`). */
  writeTimeoutMs: number;
  /** Connections served at once (`--max-connections`); past it, requests are answered 503, health probes still served. */
  maxConnections: number;
}

/** A listening server as an adapter hands it back. */
export interface Listener {
  url: string;
  /**
   * Stops accepting connections; resolves when the requests already read have been answered and
   * every connection closed. node:http (Node, Deno, Bun's `--http-server node`) leaves idle
   * keep-alive sockets to their next request or their keep-alive timeout; Bun.serve can only close
   * them at once (docs/reference/cli.md).
   */
  close(): Promise<void>;
}

/** What the CLI needs from the JavaScript runtime it runs on; one small object per adapter. */
export interface Host {
  platform: Platform;
  args: string[];
  /**
   * Serves `router` (every request answered by it: on node:http from the IncomingMessage itself, on
   * Bun.serve through `webFetch`). `clients` hears of each connection opening and closing where the
   * server reports them (node:http; Bun.serve does not). `limits` bound slow, non-reading and
   * surplus connections where the adapter holds the sockets (node:http). `httpServer`: one of
   * `httpServers`, which the CLI checked (`--http-server`).
   */
  serve(router: Router, options: { hostname: string; port: number; clients?: ClientConnections; limits?: ConnectionLimits; httpServer?: string }): Promise<Listener>;
  /** The HTTP servers this runtime can listen with (`--http-server`), its default first. */
  httpServers: readonly string[];
  /** Calls `onChange` when anything under `dir` changes; returns a function that stops watching. Optional. */
  watch?(dir: string, onChange: () => void): () => void;
  writeTextFile(path: string, text: string): Promise<void>;
  /**
   * Calls `handler` on every SIGINT and SIGTERM. It stays installed, so a repeated signal (a
   * wrapper forwarding the process group's) never falls back to the default action and kills us.
   */
  onShutdown(handler: (signal: ShutdownSignal) => void): void;
  /**
   * Keeps user code from ending the process: errors that escape to it (a throw in a timer, a
   * rejection nobody awaits) go to `report`, and the runtime's own exit calls throw where user
   * code makes them. `exit` above still ends the process.
   */
  guard(report: (error: unknown, kind: EscapeKind) => void): void;
  exit(code: number): never;
}
