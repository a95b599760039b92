// Deno entry: `deno run -A --unstable-no-legacy-abort adapters/deno/main.ts serve --repo functions`. Deno.serve for sockets.
import { runCli } from "../cli.ts";
import type { Host } from "../host.ts";
import { createDenoPlatform } from "./platform.ts";

const host: Host = {
  platform: createDenoPlatform(),
  args: Deno.args,
  serve: (fetch, { hostname, port }) =>
    new Promise((resolve) => {
      const server = Deno.serve({
        hostname,
        port,
        onListen: ({ port: actual }) => resolve({ url: `http://${hostname}:${actual}`, close: () => server.shutdown() }),
      }, fetch);
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
    Deno.addSignalListener("SIGINT", handler);
    Deno.addSignalListener("SIGTERM", handler);
  },
  exit: (code) => Deno.exit(code),
};

await runCli(host);
