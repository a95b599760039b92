import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";

// A function.yaml built to cost its reader (40 000 keys, 840 kB), dropped into the repository of a
// running dev server while a client is being served: the server must read it within its bounds.

let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const SIMPLE = JSON.stringify({
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array(16).fill(1) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array(16).fill(2) },
  ],
});

describe(`function.yaml bounds under dev (${TARGET_RUNTIME})`, () => {
  it("refuses a 40 000-key file dropped into a running repository without freezing its other functions", { timeout: 60_000 }, async () => {
    const repo = tempRepository("simple");
    const command = cliEntry(TARGET_RUNTIME, ["dev", repo, "--port", "0"]);
    server = await spawnServer(command[0], command[1], { timeoutMs: 90_000 });
    const infer = async () => {
      const started = performance.now();
      const response = await fetch(`${server!.url}/v2/models/simple/infer`, { method: "POST", body: SIMPLE, headers: { "content-type": "application/json" } });
      await response.arrayBuffer();
      return { status: response.status, ms: performance.now() - started };
    };
    expect((await infer()).status).toBe(200);
    mkdirSync(join(repo, "huge", "1"), { recursive: true });
    writeFileSync(join(repo, "huge", "function.yaml"), "parameters:\n" + Array.from({ length: 40_000 }, (_, i) => `  key_${i}: { string_value: "v" }`).join("\n") + "\n");
    // Serve through the reload (the dev server's watcher and its one-second poll): no answer waits long.
    let slowest = 0;
    let reason = "";
    const until = performance.now() + 4000;
    while (performance.now() < until) {
      const { status, ms } = await infer();
      expect(status).toBe(200);
      slowest = Math.max(slowest, ms);
      const index = (await (await fetch(`${server.url}/v2/repository/index`, { method: "POST" })).json()) as { name: string; reason: string }[];
      reason = index.find((row) => row.name === "huge")?.reason ?? "";
      if (reason) break;
    }
    expect(reason).toMatch(/huge\/function\.yaml:1: the file has \d+ characters; a function\.yaml may have at most 262144/);
    expect(slowest).toBeLessThan(1000); // the whole file used to be parsed: ~19 s with every request waiting
  });
});
