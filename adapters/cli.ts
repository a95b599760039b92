import { createRuntime, modelSignatureReader, VERSION } from "../runtime/mod.ts";
import { repeatedLine, systemClock } from "../runtime/core/mod.ts";
import { checkRepository, CONFIG_FILE_LIMITS, convertPbtxt, defaultLoadLimits, formatIssue, FUNCTION_FILE, TRITON_CONFIG_FILE } from "../runtime/config/mod.ts";
import type { Host } from "./host.ts";
import { createShutdown, RequestTracker } from "./graceful-shutdown.ts";
import { collectAfterRelease } from "./collect-after-release.ts";
import { connectionsThatFit, openFileLimit } from "./descriptor-limit.ts";
import { PROBE_ROOM } from "./node/connection-limits.ts";
import { quickAnswer, seeHelp } from "./cli-usage.mjs";
import { fail, LIMIT_OPTIONS, loadLimits, parseFlags, readServeFlags } from "./cli-flags.ts";

/** The `tensorfn` command line, shared by the Node, Bun and Deno entry points. */
export async function runCli(host: Host): Promise<void> {
  // Help, version and a mistyped command are answered before anything is loaded (bin.mjs does the same).
  const quick = quickAnswer(host.args, VERSION);
  if (quick) {
    (quick.toStderr ? console.error : console.log)(quick.text);
    return host.exit(quick.code);
  }
  const [command, ...rest] = host.args;
  switch (command) {
    case "serve":
      return await serve(host, rest, { dev: false });
    case "dev":
      return await serve(host, rest, { dev: true });
    case "check":
      return await check(host, rest);
    case "init":
      return await init(host, rest);
    case "convert":
      return await convert(host, rest);
    case "bench":
    case "help": {
      // Loaded on demand: the load generator (and undici) stay out of `serve`. `help bench` is bench's --help.
      const { runBench } = await import("./bench/bench-command.ts");
      return host.exit(await runBench(command === "help" ? ["--help"] : rest));
    }
  }
}

async function serve(host: Host, args: string[], { dev }: { dev: boolean }): Promise<void> {
  const settings = await readServeFlags(host, args, dev);
  const { repository, hostname, port, grpcPort } = settings;
  const runtime = await createRuntime(settings.runtime);
  // From here on, a handler's stray error or exit call fails its function, not the server.
  host.guard((error, kind) => runtime.escaped(error, kind));
  const tracker = new RequestTracker();
  // Every port full at once must still leave descriptors for files, threads and processes.
  const maxConnections = connectionsThatFit(settings.maxConnections, grpcPort === undefined ? 1 : 2, PROBE_ROOM);
  if (maxConnections < settings.maxConnections) {
    host.platform.log.warn(`--max-connections ${settings.maxConnections} lowered to ${maxConnections} per port: this process may open ${openFileLimit()} files (ulimit -n); raise that limit to serve more connections`);
  }
  const limits = { requestTimeoutMs: settings.requestTimeoutMs, writeTimeoutMs: settings.writeTimeoutMs, maxConnections };
  // A port that cannot be listened on ends the start, naming the address: a pod or a script must not wait on a server that never serves.
  const listener = await host
    .serve(tracker.wrap(runtime.router), { hostname, port, clients: runtime.clients, limits, httpServer: settings.httpServer })
    .catch((error: Error) => fail(host, `--port ${port}: ${listenError(error, hostname, port)}`));
  let metricsListener: { url: string; close(): Promise<void> } | undefined;
  // gRPC on its own port when asked for (Triton's is 8001; 0 picks a free one), before the URL line.
  const grpcDrops = repeatedLine((message) => host.platform.log.warn(message), systemClock);
  // gRPC (grpc-js and the protocol's descriptors) is loaded only for a server that serves it.
  const grpcServer = grpcPort === undefined ? undefined : await import("./grpc-server.ts");
  const grpcListener =
    grpcServer === undefined
      ? undefined
      : await grpcServer
          .serveGrpc(await runtime.grpc(), { hostname, port: grpcPort!, limits: { ...limits, idleTimeoutMs: grpcServer.DEFAULT_GRPC_LIMITS.idleTimeoutMs, maxBufferedBytes: settings.maxBufferedBytes }, dropped: (message) => (runtime.clients.dropped(), grpcDrops(message)), released: collectAfterRelease(host.platform.collectGarbage) })
          .catch((error: Error) => fail(host, `--grpc-port ${grpcPort}: ${listenError(error, hostname, grpcPort!)}`));
  let stopWatching = () => {};
  // Before the URL is announced: whoever saw it may send SIGTERM at once, and must get a drain.
  host.onShutdown(
    createShutdown({
      timeoutMs: settings.shutdownTimeoutMs,
      clock: systemClock,
      log: host.platform.log,
      tracker,
      drain: () => {
        stopWatching();
        runtime.drain();
      },
      listeners: () => [listener, ...(metricsListener ? [metricsListener] : []), ...(grpcListener ? [grpcListener] : [])],
      finish: async () => {
        if (settings.traceFile) {
          await host.writeTextFile(settings.traceFile, JSON.stringify(runtime.trace(24 * 3600)));
          host.platform.log.info(`trace written to ${settings.traceFile} (open it in Perfetto or chrome://tracing)`);
        }
        await runtime.stop();
      },
      exit: (code) => host.exit(code),
    }),
  );
  console.log(`tensorfn serving ${repository} at ${listener.url}`);
  if (grpcListener) console.log(`tensorfn gRPC (KServe v2) at ${grpcListener.url}`);
  if (settings.metricsPort !== undefined) {
    const metricsPort = settings.metricsPort;
    metricsListener = await host
      .serve(tracker.wrap(runtime.metricsRouter), { hostname, port: metricsPort })
      .catch((error: Error) => fail(host, `--metrics-port ${metricsPort}: ${listenError(error, hostname, metricsPort)}`));
    console.log(`tensorfn metrics at ${metricsListener.url}/metrics`);
  }
  if (dev) {
    stopWatching = watchRepository(host, repository, () => runtime.models.poll());
    for (const line of devUrls(listener.url, runtime.models.index().map((r) => r.name))) console.log(line);
  }
  console.log(
    settings.adminKeys
      ? "  control routes (repository, trace, dashboard) need an admin key: Authorization: Bearer <key>"
      : "  control routes (repository, trace, dashboard) answer only requests to 127.0.0.1/localhost/[::1], not from other sites (no --admin-key-file)",
  );
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

/** Why a port could not be listened on, naming the address (Bun's own message does not). */
function listenError(error: Error, hostname: string, port: number): string {
  const address = `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  const code = (error as { code?: string }).code;
  if (code === "EADDRINUSE") return `${address} is already in use`;
  if (code === "EADDRNOTAVAIL") return `${address} is not an address of this machine`;
  if (code === "EACCES") return `${address} needs privileges to listen on`;
  return error.message.includes(String(port)) ? error.message : `${address}: ${error.message}`;
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
  const { values, positionals } = parseFlags(host, "check", { args, allowPositionals: true, options: { ...LIMIT_OPTIONS, "no-models": { type: "boolean", default: false } } });
  const dir = positionals[0];
  if (!dir) fail(host, `check needs a repository directory\n${seeHelp("check")}`);
  const limits = { ...defaultLoadLimits(host.platform.cpuCount()), ...loadLimits(host, values as unknown as Record<string, string | undefined>) };
  // Each model is opened (and released) as a load opens it, unless --no-models.
  const signatures = values["no-models"] ? undefined : await modelSignatureReader(host.platform);
  const issues = await checkRepository(host.platform, dir.replace(/\/+$/, ""), { limits, signatureOf: signatures?.read, checkModule: host.platform.checkModule }).finally(() => signatures?.close());
  for (const issue of issues) console.log(formatIssue(issue));
  if (issues.length === 0) console.log(`${dir}: ok`);
  host.exit(issues.length > 0 ? 1 : 0);
}

/** `tensorfn convert <repo>`: function.yaml beside each config.pbtxt that has none; issues as `check` prints them. */
async function convert(host: Host, args: string[]): Promise<void> {
  const { positionals } = parseFlags(host, "convert", { args, allowPositionals: true, options: {} });
  const dir = positionals[0]?.replace(/\/+$/, "");
  if (!dir || positionals.length > 1) fail(host, `convert needs one repository directory\n${seeHelp("convert")}`);
  const { platform } = host;
  const folders = (await platform.readDir(dir).catch(() => fail(host, `convert: cannot read ${dir}`))).filter((e) => e.isDirectory && !e.name.startsWith("."));
  let failed = 0;
  let written = 0;
  for (const { name } of folders) {
    const files = (await platform.readDir(`${dir}/${name}`)).filter((e) => e.isFile).map((e) => e.name);
    if (!files.includes(TRITON_CONFIG_FILE)) continue;
    if (files.includes(FUNCTION_FILE)) {
      console.log(`${dir}/${name}: has a ${FUNCTION_FILE} already (it is the one served); left as it is`);
      continue;
    }
    const file = `${dir}/${name}/${TRITON_CONFIG_FILE}`;
    let text: string;
    try {
      text = await platform.readTextFile(file, { maxBytes: CONFIG_FILE_LIMITS.bytes });
    } catch (error) {
      console.log(`${file}: ${(error as Error).message}`);
      failed++;
      continue;
    }
    const converted = convertPbtxt(text, { file, name });
    for (const issue of converted.errors) console.log(formatIssue(issue));
    if (!converted.yaml) {
      failed++;
      continue;
    }
    await host.writeTextFile(`${dir}/${name}/${FUNCTION_FILE}`, converted.yaml);
    written++;
    console.log(`${dir}/${name}/${FUNCTION_FILE}: written${converted.ignored.length > 0 ? ` (left out, no effect in tensorfn: ${converted.ignored.join(", ")})` : ""}`);
  }
  console.log(`${written} converted, ${failed} with problems`);
  host.exit(failed > 0 ? 1 : 0);
}

async function init(host: Host, args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(host, "init", { args, allowPositionals: true, options: { model: { type: "string" }, handler: { type: "boolean", default: false } } });
  const dir = positionals[0];
  if (!dir || positionals.length > 1) fail(host, `init needs one function folder to create\n${seeHelp("init")}`);
  const { initFunction } = await import("./init-command.ts");
  const signatures = values.model ? await modelSignatureReader(host.platform) : undefined;
  try {
    const files = await initFunction({ dir, model: values.model, handler: values.handler!, signatureOf: (path) => signatures!.read(path) });
    console.log(`${dir}: wrote ${files.join(", ")}`);
    console.log(`  serve it: tensorfn dev ${dir.replace(/\/+$/, "").split("/").slice(0, -1).join("/") || "."}`);
  } catch (error) {
    fail(host, `init: ${(error as Error).message}`);
  } finally {
    await signatures?.close();
  }
}

