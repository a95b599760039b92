import type { Platform } from "../runtime/mod.ts";

/** A listening server as an adapter hands it back. */
export interface Listener {
  url: string;
  close(): Promise<void>;
}

/** What the CLI needs from the JavaScript runtime it runs on; one small object per adapter. */
export interface Host {
  platform: Platform;
  args: string[];
  serve(fetch: (request: Request) => Response | Promise<Response>, options: { hostname: string; port: number }): Promise<Listener>;
  /** Calls `onChange` when anything under `dir` changes; returns a function that stops watching. Optional. */
  watch?(dir: string, onChange: () => void): () => void;
  writeTextFile(path: string, text: string): Promise<void>;
  /** Calls `handler` once on SIGINT or SIGTERM. */
  onShutdown(handler: () => void): void;
  exit(code: number): never;
}
