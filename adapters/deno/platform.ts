import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import type { Platform } from "../../runtime/mod.ts";
import { consoleLogger } from "../console-logger.ts";
import type { LogOptions } from "../console-logger.ts";
import { checkModule } from "../check-module.ts";
import { freshImporter } from "./fresh-import.ts";

/** Platform over Deno's own file and env APIs. */
export function createDenoPlatform(log: LogOptions = {}): Platform {
  const logger = consoleLogger(log);
  return {
    name: `deno ${Deno.version.deno}`,
    readFile: (path) => Deno.readFile(path),
    readTextFile: (path) => Deno.readTextFile(path),
    readDir: async (path) => {
      const entries = [];
      for await (const e of Deno.readDir(path)) entries.push({ name: e.name, isFile: e.isFile, isDirectory: e.isDirectory });
      return entries;
    },
    stat: async (path) => {
      const s = await Deno.stat(path).catch(() => undefined);
      return s && { isFile: s.isFile, isDirectory: s.isDirectory, size: s.size, mtimeMs: s.mtime?.getTime() ?? 0 };
    },
    realPath: (path) => Deno.realPath(path).catch(() => undefined),
    env: (key) => Deno.env.get(key),
    cpuCount: () => navigator.hardwareConcurrency,
    log: logger,
    importModule: freshImporter((message) => logger.warn(message)),
    checkModule,
    // Deno's node:crypto: native and synchronous, where WebCrypto's digest is neither.
    sha256Hex: (chunks) => {
      const hash = createHash("sha256");
      for (const chunk of chunks) hash.update(chunk);
      return hash.digest("hex");
    },
    startWorker: (module) => {
      // Deno's workers are web Workers: the module's own `self` is the message endpoint.
      const worker = new Worker(module.href, { type: "module" });
      let exitHandler: ((reason: string) => void) | undefined;
      worker.onerror = (event) => {
        event.preventDefault();
        exitHandler?.(event.message);
      };
      return {
        postMessage: (message, transfer) => worker.postMessage(message, { transfer: transfer ?? [] }),
        onMessage: (handler) => worker.addEventListener("message", (event) => handler(event.data)),
        onExit: (handler) => void (exitHandler = handler),
        terminate: () => Promise.resolve(worker.terminate()),
      };
    },
  };
}
