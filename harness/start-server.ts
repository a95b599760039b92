import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime } from "../runtime/mod.ts";
import type { Runtime, RuntimeOptions } from "../runtime/mod.ts";
import { LIMIT_FLAGS } from "../runtime/config/mod.ts";
import { createNodePlatform } from "../adapters/node/platform.ts";
import { answerClientErrors } from "../adapters/node/client-error.ts";
import { reportConnections, requestListener } from "../adapters/node/request-listener.ts";
import { serveGrpc } from "../adapters/grpc-server.ts";

export { FUNCTIONS } from "./repositories.ts";
import { FUNCTIONS } from "./repositories.ts";

export interface TestServer {
  url: string;
  /** `host:port` of its gRPC port, when started with `grpc: true`. */
  grpc?: string;
  /** The in-process runtime; undefined when the server runs under Bun or Deno. */
  runtime?: Runtime;
  close(): Promise<void>;
}

/**
 * The JavaScript runtime the end-to-end suite targets: `TENSORFN_RUNTIME=bun|deno` runs every
 * server through that runtime's entry point (.ci/run does both), otherwise in this Node process.
 */
export const TARGET_RUNTIME = (process.env.TENSORFN_RUNTIME ?? "node") as "node" | "bun" | "deno";

/** True for tests that need the server in this process (a fake clock, say). */
export const inProcess = TARGET_RUNTIME === "node";

/** What a test may ask of its server beyond the runtime's options: a gRPC port too (`--grpc-port 0`). */
export type ServerOptions = Partial<RuntimeOptions> & { grpc?: boolean };

/** Starts the real runtime and HTTP server on 127.0.0.1 with an ephemeral port (and gRPC's, when asked). */
export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  if (TARGET_RUNTIME !== "node") return await startServerUnder(TARGET_RUNTIME, options);
  const platform = createNodePlatform();
  const quiet = { info() {}, warn() {}, error() {} };
  const runtime = await createRuntime({ platform: { ...platform, log: quiet }, repository: FUNCTIONS, ...options });
  // The Node adapter's listener: every request through the runtime's router.
  const server = createServer(requestListener(runtime.router));
  answerClientErrors(server);
  reportConnections(server, runtime.clients);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  const grpc = options.grpc ? await serveGrpc(await runtime.grpc(), { hostname: "127.0.0.1", port: 0, dropped: () => runtime.clients.dropped() }) : undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    ...(grpc && { grpc: grpc.url }),
    runtime,
    close: async () => {
      await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), grpc?.close()]);
      await runtime.stop();
    },
  };
}

/** A temporary key file (one key per line) for the CLI's --api-key-file / --admin-key-file. */
function keyFile(keys: readonly string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), "tensorfn-keys-")), "keys");
  writeFileSync(file, keys.join("\n"));
  return file;
}

/** The same server as a Bun or Deno process, configured through the CLI flags. */
async function startServerUnder(runtime: "bun" | "deno", options: ServerOptions): Promise<TestServer> {
  if (options.clock || options.backends) throw new Error(`a fake clock or custom backends need the server in-process, not under ${runtime}`);
  const args = [options.dashboard ? "dev" : "serve", "--repo", options.repository ?? FUNCTIONS, "--port", "0"];
  if (options.controlMode && !options.dashboard) args.push("--model-control-mode", options.controlMode);
  for (const name of options.loadModels ?? []) args.push("--load-model", name);
  if (options.pollIntervalMs !== undefined) args.push("--repository-poll-secs", String(options.pollIntervalMs / 1000));
  if (options.budgets?.host !== undefined) args.push("--host-memory-budget", String(options.budgets.host));
  if (options.budgets?.device !== undefined) args.push("--device-memory-budget", String(options.budgets.device));
  if (options.idleTimeoutMs !== undefined) args.push("--idle-timeout-secs", String(options.idleTimeoutMs / 1000));
  if (options.maxInputBytes !== undefined) args.push("--max-input-size", String(options.maxInputBytes));
  if (options.maxElements !== undefined) args.push("--max-elements", String(options.maxElements));
  if (options.cacheSize !== undefined) args.push("--cache-size", String(options.cacheSize));
  if (options.histogramLatencies) args.push("--metrics-config", "histogram_latencies=true");
  if (options.traceRate !== undefined) args.push("--trace-rate", String(options.traceRate));
  if (options.strictReadiness !== undefined) args.push("--strict-readiness", String(options.strictReadiness));
  if (options.accelerator) args.push("--accelerator", options.accelerator);
  if (options.rateLimit) args.push("--rate-limit", options.rateLimit);
  for (const [flag, keys] of [["--api-key-file", options.apiKeys], ["--admin-key-file", options.adminKeys]] as const) {
    if (keys) args.push(flag, keyFile(keys));
  }
  for (const origin of options.corsOrigins ?? []) args.push("--cors-origin", origin);
  for (const r of options.rateLimitResources ?? []) args.push("--rate-limit-resource", [r.name, r.count, ...(r.device ? [r.device.replace(/^gpu/, "")] : [])].join(":"));
  for (const [key, value] of Object.entries(options.limits ?? {})) args.push(LIMIT_FLAGS[key as keyof typeof LIMIT_FLAGS], String(value));
  for (const [name, p] of Object.entries(options.hostPolicies ?? {})) {
    args.push("--host-policy", [name, ...(p.cpu_cores !== undefined ? [`cpu-cores=${p.cpu_cores}`] : []), ...(p.numa_node !== undefined ? [`numa-node=${p.numa_node}`] : [])].join(","));
  }
  if (options.grpc) args.push("--grpc-port", "0");
  if (options.modelmesh) args.push("--modelmesh-root", options.modelmesh.root);
  const [command, rest] = cliEntry(runtime, args);
  const { spawnServer } = await import("./server-process.ts");
  const server = await spawnServer(command, rest, { timeoutMs: 90_000 });
  const { grpcAddress } = await import("./server-process.ts");
  const grpc = options.grpc ? await grpcAddress(server) : undefined;
  return { url: server.url, ...(grpc && { grpc }), close: async () => void (await server.stop()) };
}

/** The command that runs the CLI with `args` under `runtime`, from the project's root. */
export function cliEntry(runtime: "node" | "bun" | "deno", args: string[]): [string, string[]] {
  if (runtime === "bun") return ["node_modules/.bin/bun", ["adapters/bun/main.ts", ...args]];
  if (runtime === "deno") return ["node_modules/.bin/deno", ["run", "-A", "--unstable-no-legacy-abort", "adapters/deno/main.ts", ...args]];
  return [process.execPath, ["adapters/node/bin.mjs", ...args]];
}
