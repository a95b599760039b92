import { availableParallelism } from "node:os";
import { readdir, readFile, stat } from "node:fs/promises";
import process from "node:process";
import type { Platform } from "../../runtime/mod.ts";
import { consoleLogger } from "../console-logger.ts";

/** Platform over Node's fs and os modules (Bun implements the same modules natively). */
export function createNodePlatform(name = `node ${process.versions.node}`): Platform {
  return {
    name,
    readFile: async (path) => new Uint8Array(await readFile(path)),
    readTextFile: (path) => readFile(path, "utf8"),
    readDir: async (path) =>
      (await readdir(path, { withFileTypes: true })).map((e) => ({ name: e.name, isFile: e.isFile(), isDirectory: e.isDirectory() })),
    stat: async (path) => {
      const s = await stat(path).catch(() => undefined);
      return s && { isFile: s.isFile(), isDirectory: s.isDirectory(), size: s.size, mtimeMs: s.mtimeMs };
    },
    env: (key) => process.env[key],
    cpuCount: () => availableParallelism(),
    log: consoleLogger(),
  };
}
