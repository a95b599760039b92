// Bun entry: `bun adapters/bun/main.ts serve --repo functions`. Bun.serve for sockets; files go
// through the Node platform, whose fs and os modules Bun implements natively.
import { readFileSync } from "node:fs";
import type { Host } from "../host.ts";
import { quickAnswer } from "../cli-usage.mjs";

// Help and version are answered before the runtime loads (as bin.mjs does for Node).
const quick = quickAnswer(process.argv.slice(2), JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version);
if (quick) {
  (quick.toStderr ? process.stderr : process.stdout).write(`${quick.text}\n`);
  process.exit(quick.code);
}
const { runCli } = await import("../cli.ts");
const { createNodePlatform } = await import("../node/platform.ts");
const { logOptionsFrom } = await import("../console-logger.ts");
const { nodeProcessHooks } = await import("../node/process-guard.ts");
const { webFetch } = await import("../../runtime/mod.ts");
const { serveNodeHttp } = await import("../node/http-server.ts");

declare const Bun: {
  version: string;
  serve(options: { fetch: (r: Request) => Response | Promise<Response>; hostname: string; port: number }): {
    url: URL;
    stop(closeActive?: boolean): Promise<void>;
  };
};

const platform = createNodePlatform(`bun ${Bun.version}`, { log: logOptionsFrom(process.argv.slice(2)) });
const host: Host = {
  platform,
  args: process.argv.slice(2),
  serve: async (router, options) => {
    // node:http through a node:net listener of our own: Bun's node:http server, listening itself,
    // closes idle keep-alive sockets when it closes, as Bun.serve does; handed its connections,
    // it leaves them to drain (measured on Bun 1.4; docs/reference/cli.md, Graceful shutdown).
    if (options.httpServer === "node") return await serveNodeHttp(platform.log, { ownListener: true, drainsUnread: false, collect: platform.collectGarbage })(router, options);
    const { hostname, port } = options;
    const server = Bun.serve({ fetch: webFetch(router), hostname, port });
    // stop(false) (measured on Bun 1.4): refuses new connections, closes idle keep-alive sockets
    // at once and resolves when the requests in flight were answered.
    return { url: server.url.href.replace(/\/$/, ""), close: () => server.stop(false) };
  },
  httpServers: ["bun", "node"],
  ...nodeProcessHooks,
};

await runCli(host);
