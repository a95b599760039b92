import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import type { Platform } from "../../runtime/mod.ts";
import { consoleLogger } from "../console-logger.ts";
import type { LogOptions } from "../console-logger.ts";
import { checkModule } from "../check-module.ts";
import { importBundled } from "../bundled-import.ts";
import { posixSharedMemory } from "../posix-shared-memory.ts";
import { readGpus } from "../../native/index.ts";
import { processMetrics } from "../process-metrics.ts";
import { startFunctionProcess } from "../function-process.ts";
import { readRegularFile } from "../regular-file.ts";

const utf8 = new TextDecoder();

/** Platform over Deno's own file and env APIs. */
export function createDenoPlatform(log: LogOptions = {}): Platform {
  const logger = consoleLogger(log);
  const imported = new Set<string>();
  const openSharedMemory = posixSharedMemory();
  return {
    name: `deno ${Deno.version.deno}`,
    ...(openSharedMemory && { openSharedMemory }),
    processMetrics: processMetrics(),
    readGpus,
    startProcess: (options) => startFunctionProcess(options, (m) => logger.warn(m), { log }),
    readFile: (path, read) => readRegularFile(path, read),
    readTextFile: async (path, read) => utf8.decode(await readRegularFile(path, read)),
    readSharedFile: (path, read) => readRegularFile(path, { ...read, shared: true }),
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
    // Deno compiles and source-maps TypeScript itself, but never forgets a module: a query string
    // gives a new handler over the modules it imported the first time. So the first import of a
    // path is Deno's own, and a re-import goes through a bundle (bundled-import.ts); where the
    // folder is read-only, the handler file alone is new, and the log says so.
    importModule: async (path, tag) => {
      const plain = () => import(`${pathToFileURL(path).href}?tensorfn=${encodeURIComponent(tag)}`);
      if (!imported.has(path)) {
        // A package Deno finds in no node_modules or import map above the handler (a repository
        // outside tensorfn's project): the bundle resolves it as Node would, from tensorfn's install too.
        const module = await plain().catch(async (error: Error) => {
          if (!/not a dependency|Cannot find (module|package)|Relative import path/.test(error.message)) throw error;
          return (await importBundled(path, tag)) ?? Promise.reject(error);
        });
        imported.add(path);
        return module;
      }
      const module = await importBundled(path, tag);
      if (module) return module;
      logger.warn(`cannot write beside ${path}: the re-imported handler runs over the modules it imported before; restart the server to load their changes`);
      return await plain();
    },
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
