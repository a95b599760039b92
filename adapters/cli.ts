import { parseArgs } from "node:util";
import { createRuntime, DEFAULT_MAX_INPUT_BYTES } from "../runtime/mod.ts";
import { checkRepository, formatIssue } from "../runtime/config/mod.ts";
import type { Accelerator } from "../runtime/config/mod.ts";
import type { Host } from "./host.ts";

const USAGE = `usage:
  tensorfn serve --repo <dir> [--host 127.0.0.1] [--port 8000] [--max-input-size 64M] [--accelerator auto]
  tensorfn check <dir>
  tensorfn bench <url> --model <m> [--concurrency 1:64:x2 | --request-rate 100:400:x2] [--binary] [--json] (bench --help for all)`;

/** The `tensorfn` command line, shared by the Node, Bun and Deno entry points. */
export async function runCli(host: Host): Promise<void> {
  const [command, ...rest] = host.args;
  switch (command) {
    case "serve":
      return await serve(host, rest);
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

async function serve(host: Host, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      repo: { type: "string", default: "functions" },
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "8000" },
      "max-input-size": { type: "string" },
      accelerator: { type: "string" },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(host, `--port '${values.port}' is not a port number`);
  const maxInputBytes = values["max-input-size"] === undefined ? DEFAULT_MAX_INPUT_BYTES : parseBytes(host, values["max-input-size"]);
  const accelerators = ["auto", "cpu", "cuda", "tensorrt", "webgpu", "wasm"];
  if (values.accelerator && !accelerators.includes(values.accelerator)) {
    fail(host, `--accelerator '${values.accelerator}' is not one of ${accelerators.join(", ")}`);
  }
  const repository = values.repo!.replace(/\/+$/, "") || ".";
  if (!(await host.platform.stat(repository))?.isDirectory) fail(host, `--repo '${repository}' is not a directory`);

  const runtime = await createRuntime({
    platform: host.platform,
    repository,
    maxInputBytes,
    accelerator: values.accelerator as Accelerator | undefined,
  });
  const listener = await host.serve(runtime.app.fetch, { hostname: values.host!, port });
  console.log(`tensorfn serving ${repository} at ${listener.url}`);
  host.onShutdown(async () => {
    host.platform.log.info("shutting down: draining in-flight requests");
    await listener.close();
    await runtime.stop();
    host.exit(0);
  });
}

async function check(host: Host, args: string[]): Promise<void> {
  const dir = args[0];
  if (!dir) fail(host, `check needs a repository directory\n${USAGE}`);
  const issues = await checkRepository(host.platform, dir.replace(/\/+$/, ""));
  for (const issue of issues) console.log(formatIssue(issue));
  if (issues.length === 0) console.log(`${dir}: ok`);
  host.exit(issues.length > 0 ? 1 : 0);
}

/** "64M", "512k", "1G" or plain bytes. */
function parseBytes(host: Host, text: string): number {
  const match = /^([0-9]+)([kKmMgG]?)$/.exec(text.trim());
  if (!match) fail(host, `--max-input-size '${text}' is not a size (bytes, or with a k/M/G suffix)`);
  const scale = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase()]!;
  return Number(match[1]) * scale;
}

function fail(host: Host, message: string): never {
  console.error(`tensorfn: ${message}`);
  return host.exit(2);
}
