// Deno entry: `deno run -A --unstable-no-legacy-abort adapters/deno/main.ts serve --repo functions`. Deno.serve for sockets.
import { runCli } from "../cli.ts";
import type { Host } from "../host.ts";
import { createDenoPlatform } from "./platform.ts";
import { logOptionsFrom } from "../console-logger.ts";
import { withFastLane } from "../../runtime/mod.ts";

// The process's own exit, taken before the guard replaces Deno.exit: the server's shutdown ends the process with it.
const exitProcess = Deno.exit.bind(Deno);

const host: Host = {
  platform: createDenoPlatform(logOptionsFrom(Deno.args)),
  args: Deno.args,
  serve: (app, { hostname, port, lane }) =>
    new Promise((resolve) => {
      const fetch = lane ? withFastLane(app, lane) : app;
      // shutdown() (measured on Deno 2.9) refuses new connections, closes idle keep-alive sockets
      // and waits for responses, but also cuts request bodies still being uploaded (the handler's
      // read fails with BadResource). So close() first waits for the handlers in flight, which
      // read their bodies, while they answer `Connection: close`; then shuts down.
      let inFlight = 0;
      let settled: (() => void) | undefined;
      const counted = async (request: Request) => {
        inFlight++;
        try {
          return await fetch(request);
        } finally {
          if (--inFlight === 0) settled?.();
        }
      };
      const close = async () => {
        if (inFlight > 0) await new Promise<void>((done) => (settled = done));
        await server.shutdown();
      };
      const server = Deno.serve({
        hostname,
        port,
        onListen: ({ port: actual }) => resolve({ url: `http://${hostname}:${actual}`, close }),
      }, counted);
    }),
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
