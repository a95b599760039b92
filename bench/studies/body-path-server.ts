// One tensorfn server for bench/studies/body-path.ts: `direct` is the Node adapter's listener
// (bodies read from the IncomingMessage by NodeBody), `bridge` the same router behind
// @hono/node-server's web `Request` (bodies through its web-stream bridge, the path before issue 11).
import { serve } from "@hono/node-server";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { createRuntime } from "../../runtime/mod.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";
import { requestListener } from "../../adapters/node/request-listener.ts";

const mode = process.argv[2] as "direct" | "bridge";
const platform = createNodePlatform();
const quiet = { info() {}, warn() {}, error() {} };
const repository = fileURLToPath(new URL("../../functions", import.meta.url));
const runtime = await createRuntime({ platform: { ...platform, log: quiet }, repository, controlMode: "none" });
const server = mode === "direct" ? createServer(requestListener(runtime.router)).listen(0, "127.0.0.1") : serve({ fetch: runtime.fetch, hostname: "127.0.0.1", port: 0 });
server.once("listening", () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
