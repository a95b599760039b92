import { createHash, hash } from "node:crypto";
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { createRequire } from "node:module";
import { mkdtemp, readdir, realpath, rm, stat } from "node:fs/promises";
import process from "node:process";
import { Worker } from "node:worker_threads";
import type { Platform } from "../../runtime/mod.ts";
import { consoleLogger } from "../console-logger.ts";
import type { LogOptions } from "../console-logger.ts";
import { checkModule } from "../check-module.ts";
import { importBundled } from "../bundled-import.ts";
import { loadNative, readGpus } from "../../native/index.ts";
import { posixSharedMemory } from "../posix-shared-memory.ts";
import { fullCollection } from "./full-collection.mjs";
import { processMetrics } from "../process-metrics.ts";
import { startFunctionProcess } from "../function-process.ts";
import { readRegularFile } from "../regular-file.ts";

const utf8 = new TextDecoder();

/** Compiled modules (compiled-sources.mjs): `workers` by their source's URL, `native` for native/index.ts. */
export interface CompiledModules {
  native: string;
  /** adapters/function-process-entry.ts compiled (isolation: process). */
  functionProcess?: string;
  workers: Readonly<Record<string, string>>;
}

/**
 * Platform over Node's fs and os modules (Bun implements the same modules natively). With `compiled`,
 * a worker thread loads the compiled module of its source where there is one, without TypeScript.
 */
export function createNodePlatform(name = `node ${process.versions.node}`, options: { compiled?: CompiledModules; log?: LogOptions } = {}): Platform {
  const { compiled } = options;
  const openSharedMemory = posixSharedMemory();
  const log = consoleLogger(options.log);
  return {
    name,
    ...(openSharedMemory && { openSharedMemory }),
    processMetrics: processMetrics(),
    readFile: (path, read) => readRegularFile(path, read),
    readTextFile: async (path, read) => utf8.decode(await readRegularFile(path, read)),
    readSharedFile: (path, read) => readRegularFile(path, { ...read, shared: true }),
    readDir: async (path) =>
      (await readdir(path, { withFileTypes: true })).map((e) => ({ name: e.name, isFile: e.isFile(), isDirectory: e.isDirectory() })),
    stat: async (path) => {
      const s = await stat(path).catch(() => undefined);
      return s && { isFile: s.isFile(), isDirectory: s.isDirectory(), size: s.size, mtimeMs: s.mtimeMs };
    },
    realPath: (path) => realpath(path).catch(() => undefined),
    env: (key) => process.env[key],
    cpuCount: () => availableParallelism(),
    log,
    scratchPath: async (name) => {
      const dir = await mkdtemp(join(tmpdir(), "tensorfn-"));
      return { path: join(dir, name), remove: () => rm(dir, { recursive: true, force: true }) };
    },
    collectGarbage: () => fullCollection()(),
    trimMemory: () => void loadNative()?.trimMemory(),
    plainView: (bytes) => loadNative()?.plainView(bytes),
    readGpus,
    startProcess: (started) => startFunctionProcess(started, (m) => log.warn(m), { compiledEntry: compiled?.functionProcess, log: options.log }),
    // Each new tag must evaluate the file again (a reload's new code), and the modules it imports
    // from its folder with it. Bun compiles and source-maps TypeScript itself and keeps ES modules
    // in require's cache too (measured on Bun 1.4): forgotten for the folder, then a query string
    // on a plain path makes the handler a new module (Bun ignores one on a file URL). Node: a
    // bundle beside the handler (bundled-import.ts), whose inline source map Node applies to
    // stacks (bin.mjs enables that); where the folder is read-only, tsx's tsImport, which compiles
    // TypeScript as ESM whatever the nearest package.json says and gives each call its own module
    // graph, except where it compiles the handler as CommonJS (no "type": "module" above it): its
    // imports then sit in require's cache, which forgets the folder's files first.
    importModule: async (path, tag) => {
      forgetRequired(dirname(path) + sep);
      if (typeof process.versions.bun === "string") {
        // A package Bun finds in no node_modules above the handler (a repository outside the
        // project): the bundle resolves it as Node would, from tensorfn's install too.
        return await import(`${path}?tensorfn=${encodeURIComponent(tag)}`).catch(async (error: Error) => {
          if (!/Cannot find (module|package)/.test(error.message)) throw error;
          return (await importBundled(path, tag)) ?? Promise.reject(error);
        });
      }
      const bundled = await importBundled(path, tag);
      if (bundled) return bundled;
      const { tsImport } = await import("tsx/esm/api");
      return (await tsImport(pathToFileURL(path).href, import.meta.url)) as Record<string, unknown>;
    },
    checkModule,
    // One chunk (a cached reply's key, every hit) in one call: crypto.hash costs 0.8 µs for a
    // 436-byte body where a Hash object costs 2.8 (Node 20; the Hash is a stream class).
    sha256Hex: (chunks) => {
      if (chunks.length === 1) return hash("sha256", chunks[0]!, "hex");
      const h = createHash("sha256");
      for (const chunk of chunks) h.update(chunk);
      return h.digest("hex");
    },
    startWorker: (module) => {
      // A compiled module gone since (a rebuild's old directory is removed after a day) falls back to the source.
      const built = compiled?.workers[module.href];
      const workerData = built && existsSync(new URL(built)) ? { module: built, native: compiled!.native } : { module: module.href };
      const worker = new Worker(new URL("./worker-bootstrap.mjs", import.meta.url), { workerData, execArgv: [] });
      // A worker must not keep the process alive on its own: shutdown terminates them anyway.
      worker.unref();
      let exited = false;
      const exit = (handler: (reason: string) => void) => (reason: string) => {
        if (exited) return;
        exited = true;
        handler(reason);
      };
      return {
        postMessage: (message, transfer) => worker.postMessage(message, transfer),
        onMessage: (handler) => void worker.on("message", handler),
        onExit: (handler) => {
          const once = exit(handler);
          worker.on("error", (error) => once(error.message));
          worker.on("exit", (code) => once(`exited with code ${code}`));
        },
        terminate: async () => {
          exited = true;
          await worker.terminate();
        },
      };
    },
  };
}

const requireCache = createRequire(import.meta.url).cache;

/** Drops CommonJS modules loaded from under `folder` (keys may carry tsx's `?namespace=…`). */
function forgetRequired(folder: string): void {
  for (const key of Object.keys(requireCache)) if (key.startsWith(folder)) delete requireCache[key];
}
