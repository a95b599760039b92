// Deno entry: `deno run -A --unstable-no-legacy-abort adapters/deno/main.ts serve --repo functions`. node:http for sockets.
import type { Host } from "../host.ts";
import { quickAnswer } from "../cli-usage.mjs";

// Help and version are answered before the runtime loads (as bin.mjs does for Node).
const quick = quickAnswer(Deno.args, JSON.parse(Deno.readTextFileSync(new URL("../../package.json", import.meta.url))).version);
if (quick) {
  const write = quick.toStderr ? Deno.stderr : Deno.stdout;
  write.writeSync(new TextEncoder().encode(`${quick.text}\n`));
  Deno.exit(quick.code);
}
const { runCli } = await import("../cli.ts");
const { createDenoPlatform } = await import("./platform.ts");
const { logOptionsFrom } = await import("../console-logger.ts");
const { serveNodeHttp } = await import("../node/http-server.ts");

// The process's own exit, taken before the guard replaces Deno.exit: the server's shutdown ends the process with it.
const exitProcess = Deno.exit.bind(Deno);

const platform = createDenoPlatform(logOptionsFrom(Deno.args));
const host: Host = {
  platform,
  args: Deno.args,
  // node:http, as under Node (Deno's is a net.Server too): its close stops listening without
  // closing idle keep-alive sockets, so a drain loses nothing, where Deno.serve's shutdown() closes
  // them under clients sending on them (measured on Deno 2.9; docs/reference/cli.md); and it holds
  // the sockets, so the connection limits and connection reports apply.
  serve: serveNodeHttp(platform.log, { drainsUnread: false }),
  httpServers: ["node"],
  watch: (dir, onChange) => {
    const watcher = Deno.watchFs(dir, { recursive: true });
    void (async () => {
      try {
        for await (const _event of watcher) onChange();
      } catch {
        // closed
      }
    })();
    return () => watcher.close();
  },
  writeTextFile: (path, text) => Deno.writeTextFile(path, text),
  onShutdown: (handler) => {
    Deno.addSignalListener("SIGINT", () => handler("SIGINT"));
    Deno.addSignalListener("SIGTERM", () => handler("SIGTERM"));
  },
  guard: (report) => {
    // Web events, as Deno dispatches them; preventDefault() keeps the process alive.
    globalThis.addEventListener("error", (event) => {
      event.preventDefault();
      report(event.error, "exception");
    });
    globalThis.addEventListener("unhandledrejection", (event) => {
      event.preventDefault();
      report(event.reason, "rejection");
    });
    const refuse = (call: string) => () => {
      throw new Error(`${call} was refused: code running in the server cannot stop it (send it SIGTERM)`);
    };
    Deno.exit = refuse("Deno.exit()");
    const nodeProcess = (globalThis as { process?: { exit?: unknown; abort?: unknown } }).process;
    if (nodeProcess) {
      nodeProcess.exit = refuse("process.exit()");
      nodeProcess.abort = refuse("process.abort()");
    }
  },
  exit: (code) => exitProcess(code),
};

await runCli(host);
