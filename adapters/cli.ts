import { parseArgs } from "node:util";
import { createRuntime, DEFAULT_MAX_INPUT_BYTES } from "../runtime/mod.ts";
import { parseByteSize } from "../runtime/lifecycle/mod.ts";
import type { ControlMode } from "../runtime/lifecycle/mod.ts";
import { checkRepository, formatIssue } from "../runtime/config/mod.ts";
import type { Accelerator } from "../runtime/config/mod.ts";
import type { Host } from "./host.ts";

const USAGE = `usage:
  tensorfn serve --repo <dir> [--host 127.0.0.1] [--port 8000] [--model-control-mode lazy|none|poll|explicit]
                 [--load-model <name>]... [--repository-poll-secs 15] [--host-memory-budget 8G]
                 [--device-memory-budget 16G] [--idle-timeout-secs N] [--load-timeout-secs 120]
                 [--metrics-port 8002] [--metrics-config histogram_latencies=true]
                 [--trace-rate 0..1] [--trace-file trace.json]
                 [--max-input-size 64M] [--accelerator auto]
                 [--rate-limit off|execution_count] [--rate-limit-resource <name>:<count>[:<device>]]...
  tensorfn dev [dir]   the local dev server: serve in lazy mode, reloading functions as their files change
  tensorfn check <dir>
  tensorfn bench <url> --model <m> [--concurrency 1:64:x2 | --request-rate 100:400:x2] [--binary] [--json] (bench --help for all)`;

/** The `tensorfn` command line, shared by the Node, Bun and Deno entry points. */
export async function runCli(host: Host): Promise<void> {
  const [command, ...rest] = host.args;
  switch (command) {
    case "serve":
      return await serve(host, rest, { dev: false });
    case "dev":
      return await serve(host, rest, { dev: true });
    case "check":
      return await check(host, rest);
    case "bench": {
      // Loaded on demand: the load generator (and undici) stay out of `serve`.
      const { runBench } = await import("../bench/bench-command.ts");
      return host.exit(await runBench(rest));
    }
    default:
      console.error(command && command !== "--help" ? `unknown command '${command}'\n${USAGE}` : USAGE);
      host.exit(command === "--help" ? 0 : 2);
  }
}

const MODES = ["lazy", "none", "poll", "explicit"] as const;
const ACCELERATORS = ["auto", "cpu", "cuda", "tensorrt", "webgpu", "wasm"];

async function serve(host: Host, args: string[], { dev }: { dev: boolean }): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: dev,
    options: {
      repo: { type: "string" },
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "8000" },
      "max-input-size": { type: "string" },
      accelerator: { type: "string" },
      "model-control-mode": { type: "string", default: "lazy" },
      "load-model": { type: "string", multiple: true },
      "repository-poll-secs": { type: "string", default: "15" },
      "host-memory-budget": { type: "string" },
      "device-memory-budget": { type: "string" },
      "idle-timeout-secs": { type: "string" },
      "load-timeout-secs": { type: "string", default: "120" },
      "metrics-port": { type: "string" },
      "trace-rate": { type: "string" },
      "trace-file": { type: "string" },
      "metrics-config": { type: "string", multiple: true },
      "rate-limit": { type: "string", default: "off" },
      "rate-limit-resource": { type: "string", multiple: true },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(host, `--port '${values.port}' is not a port number`);
  const flags = values as unknown as Record<string, string | undefined>;
  const size = (flag: string) => {
    const text = flags[flag];
    if (text === undefined) return undefined;
    return parseByteSize(text) ?? fail(host, `--${flag} '${text}' is not a size (bytes, or with a k/M/G suffix)`);
  };
  const seconds = (flag: string) => {
    const text = flags[flag];
    if (text === undefined) return undefined;
    const n = Number(text);
    return Number.isFinite(n) && n >= 0 ? n * 1000 : fail(host, `--${flag} '${text}' is not a number of seconds`);
  };
  if (values.accelerator && !ACCELERATORS.includes(values.accelerator)) {
    fail(host, `--accelerator '${values.accelerator}' is not one of ${ACCELERATORS.join(", ")}`);
  }
  const mode = values["model-control-mode"] as ControlMode;
  if (!MODES.includes(mode)) fail(host, `--model-control-mode '${mode}' is not one of ${MODES.join(", ")}`);
  if (dev && mode !== "lazy") fail(host, "the dev server always runs in lazy mode");
  const repository = (values.repo ?? positionals[0] ?? "functions").replace(/\/+$/, "") || ".";
  if (!(await host.platform.stat(repository))?.isDirectory) fail(host, `--repo '${repository}' is not a directory`);

  const runtime = await createRuntime({
    platform: host.platform,
    repository,
    maxInputBytes: size("max-input-size") ?? DEFAULT_MAX_INPUT_BYTES,
    accelerator: values.accelerator as Accelerator | undefined,
    controlMode: mode,
    loadModels: values["load-model"],
    pollIntervalMs: seconds("repository-poll-secs"),
    loadTimeoutMs: seconds("load-timeout-secs"),
    idleTimeoutMs: seconds("idle-timeout-secs"),
    budgets: { host: size("host-memory-budget"), device: size("device-memory-budget") },
    histogramLatencies: metricsConfig(host, values["metrics-config"] ?? []).histogram_latencies === "true",
    traceRate: traceRate(host, values["trace-rate"], dev),
    dashboard: dev,
    ...rateLimiting(host, values["rate-limit"]!, values["rate-limit-resource"] ?? []),
  });
  const listener = await host.serve(runtime.app.fetch, { hostname: values.host!, port });
  console.log(`tensorfn serving ${repository} at ${listener.url}`);
  let metricsListener: { url: string; close(): Promise<void> } | undefined;
  if (values["metrics-port"] !== undefined) {
    const metricsPort = Number(values["metrics-port"]);
    if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) fail(host, `--metrics-port '${values["metrics-port"]}' is not a port number`);
    metricsListener = await host.serve(runtime.metricsFetch, { hostname: values.host!, port: metricsPort });
    console.log(`tensorfn metrics at ${metricsListener.url}/metrics`);
  }
  const stopWatching = dev ? watchRepository(host, repository, () => runtime.models.poll()) : () => {};
  if (dev) {
    for (const line of devUrls(listener.url, runtime.models.index().map((r) => r.name))) console.log(line);
  }
  host.onShutdown(async () => {
    host.platform.log.info("shutting down: draining in-flight requests");
    stopWatching();
    await metricsListener?.close();
    await listener.close();
    if (values["trace-file"]) {
      await host.writeTextFile(values["trace-file"], JSON.stringify(runtime.trace(24 * 3600)));
      host.platform.log.info(`trace written to ${values["trace-file"]} (open it in Perfetto or chrome://tracing)`);
    }
    await runtime.stop();
    host.exit(0);
  });
}

/**
 * Reloads on file changes: the platform's watcher when it has one (debounced), and a poll every
 * second as the fallback that also catches what watchers miss (editors that swap files).
 */
function watchRepository(host: Host, repository: string, reload: () => Promise<void>): () => void {
  let running: Promise<void> | undefined;
  let again = false;
  const trigger = () => {
    if (running) return void (again = true);
    running = reload()
      .catch((e: Error) => host.platform.log.error(`reload failed: ${e.message}`))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          trigger();
        }
      });
  };
  let debounce: ReturnType<typeof setTimeout> | undefined;
  const stopWatch = host.watch?.(repository, () => {
    clearTimeout(debounce);
    debounce = setTimeout(trigger, 100);
  });
  const poll = setInterval(trigger, 1000);
  return () => {
    clearInterval(poll);
    clearTimeout(debounce);
    stopWatch?.();
  };
}

/** `--trace-rate`: the share of requests traced, 0..1 (default: 0 in serve, 1 in dev). */
function traceRate(host: Host, text: string | undefined, dev: boolean): number {
  if (text === undefined) return dev ? 1 : 0;
  const rate = Number(text);
  return rate >= 0 && rate <= 1 ? rate : fail(host, `--trace-rate '${text}' must be a number between 0 and 1`);
}

/** Triton's `--rate-limit off|execution_count` and `--rate-limit-resource name:count[:device]` (device: a GPU index, or cpu). */
function rateLimiting(host: Host, mode: string, resources: string[]) {
  if (mode !== "off" && mode !== "execution_count") fail(host, `--rate-limit '${mode}' is not one of off, execution_count`);
  const rateLimitResources = resources.map((text) => {
    const [name, count, device, extra] = text.split(":");
    const n = Number(count);
    if (!name || !Number.isInteger(n) || n < 0 || extra !== undefined || (device !== undefined && !/^([0-9]+|cpu)$/.test(device))) {
      fail(host, `--rate-limit-resource '${text}' is not <name>:<count>[:<device>] (device: a GPU index, or cpu)`);
    }
    return device === undefined ? { name, count: n } : { name, count: n, device: device === "cpu" ? "cpu" : `gpu${device}` };
  });
  if (mode === "off" && rateLimitResources.length > 0) fail(host, "--rate-limit-resource needs --rate-limit execution_count");
  return { rateLimit: mode as "off" | "execution_count", rateLimitResources };
}

/** Triton's `--metrics-config key=value` (repeatable): histogram_latencies=true is what we read. */
function metricsConfig(host: Host, entries: string[]): Record<string, string> {
  const known = ["histogram_latencies", "counter_latencies", "summary_latencies"];
  const config: Record<string, string> = {};
  for (const entry of entries) {
    const [key, value] = entry.split("=", 2);
    if (!key || value === undefined || !known.includes(key)) fail(host, `--metrics-config '${entry}': expected one of ${known.map((k) => `${k}=true|false`).join(", ")}`);
    config[key] = value;
  }
  return config;
}

function devUrls(url: string, names: string[]): string[] {
  const unique = [...new Set(names)];
  return [
    `  dashboard  ${url}/`,
    `  health     ${url}/v2/health/ready`,
    `  index      curl -X POST ${url}/v2/repository/index`,
    `  metrics    ${url}/metrics`,
    `  trace      ${url}/v2/trace?seconds=30  (open in https://ui.perfetto.dev or chrome://tracing)`,
    ...unique.map((name) => `  ${name.padEnd(10)} ${url}/v2/models/${name}  (infer: POST …/infer)`),
  ];
}

async function check(host: Host, args: string[]): Promise<void> {
  const dir = args[0];
  if (!dir) fail(host, `check needs a repository directory\n${USAGE}`);
  const issues = await checkRepository(host.platform, dir.replace(/\/+$/, ""));
  for (const issue of issues) console.log(formatIssue(issue));
  if (issues.length === 0) console.log(`${dir}: ok`);
  host.exit(issues.length > 0 ? 1 : 0);
}

function fail(host: Host, message: string): never {
  console.error(`tensorfn: ${message}`);
  return host.exit(2);
}
