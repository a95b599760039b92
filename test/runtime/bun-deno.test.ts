import { describe, expect, it } from "vitest";
import { spawnServer, tempRepository } from "../support/spawn-server.ts";

// The same CLI and runtime, started under each runtime's own entry point (binaries from npm).
const runtimes: [string, string, string[]][] = [
  ["bun", "node_modules/.bin/bun", ["adapters/bun/main.ts"]],
  ["deno", "node_modules/.bin/deno", ["run", "-A", "--unstable-no-legacy-abort", "adapters/deno/main.ts"]],
];

describe.each(runtimes)("under %s", (_name, command, entry) => {
  it("serves the simple function and runs one inference", async () => {
    const server = await spawnServer(command, [...entry, "serve", "--repo", tempRepository("simple"), "--port", "0"], { timeoutMs: 90000 });
    try {
      const res = await fetch(`${server.url}/v2/models/simple/infer`, {
        method: "POST",
        body: JSON.stringify({
          inputs: ["INPUT0", "INPUT1"].map((name, k) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i * (k + 1)) })),
        }),
      });
      expect(res.status).toBe(200);
      expect((await res.json()).outputs[0].data).toEqual(Array.from({ length: 16 }, (_, i) => 3 * i));
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 120000);
});
