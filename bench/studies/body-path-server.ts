// One tensorfn server for bench/studies/body-path.ts: `direct` reads bodies through the Node
// adapter's DirectBody, `bridge` through @hono/node-server's Request (the path before issue 11).
import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { createRuntime } from "../../runtime/mod.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";
import { withDirectBody } from "../../adapters/node/request-listener.ts";

const mode = process.argv[2] as "direct" | "bridge";
const platform = createNodePlatform();
const quiet = { info() {}, warn() {}, error() {} };
const repository = fileURLToPath(new URL("../../functions", import.meta.url));
const runtime = await createRuntime({ platform: { ...platform, log: quiet }, repository, controlMode: "none" });
const fetch = mode === "direct" ? withDirectBody(runtime.app.fetch) : runtime.app.fetch;
const server = serve({ fetch, hostname: "127.0.0.1", port: 0 });
server.once("listening", () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
