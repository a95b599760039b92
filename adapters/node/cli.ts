import process from "node:process";
import { runCli } from "../cli.ts";
import type { Host } from "../host.ts";
import { createNodePlatform } from "./platform.ts";
import { watchRepositoryFolders } from "../repository-watch.ts";
import { serveNodeHttp } from "./http-server.ts";
import { logOptionsFrom } from "../console-logger.ts";
import { nodeProcessHooks } from "./process-guard.ts";
import type { CompiledModules } from "./platform.ts";

// bin.mjs imports both from the compiled CLI.
export { runCli };

/**
 * Node host: node:http answered by the runtime's router; process for signals and exit.
 * `compiled`: where bin.mjs runs the sources compiled ahead, what its worker threads load instead of TypeScript.
 */
export function nodeHost(args: string[], compiled?: CompiledModules): Host {
  const platform = createNodePlatform(undefined, { compiled, log: logOptionsFrom(args) });
  return {
    platform,
    args,
    serve: serveNodeHttp(platform.log, { collect: platform.collectGarbage }),
    httpServers: ["node"],
    // Where a watch fails, the dev server's one-second poll still catches every change.
    watch: watchRepositoryFolders,
    ...nodeProcessHooks,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await runCli(nodeHost(process.argv.slice(2)));
