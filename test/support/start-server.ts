import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { createRuntime } from "../../runtime/mod.ts";
import type { Runtime, RuntimeOptions } from "../../runtime/mod.ts";
import { createNodePlatform } from "../../adapters/node/platform.ts";

export const FUNCTIONS = fileURLToPath(new URL("../../functions", import.meta.url));

export interface TestServer {
  url: string;
  runtime: Runtime;
  close(): Promise<void>;
}

/** Starts the real runtime and HTTP server on 127.0.0.1 with an ephemeral port. */
export async function startServer(options: Partial<RuntimeOptions> = {}): Promise<TestServer> {
  const platform = createNodePlatform();
  const quiet = { info() {}, warn() {}, error() {} };
  const runtime = await createRuntime({ platform: { ...platform, log: quiet }, repository: FUNCTIONS, ...options });
  const server = serve({ fetch: runtime.app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    runtime,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.stop();
    },
  };
}
