import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { FUNCTIONS, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Lazy mode: a function folder added since the last scan is found by the request that asks for
// it, not answered 404 until a watcher or a poll reports it; names that stay unknown cost no scan.
let server: TestServer;
let repo: string;
beforeAll(async () => {
  repo = tempRepository("simple");
  server = await startServer({ repository: repo });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe("a request for a function not yet scanned", () => {
  it("scans for a folder that exists and serves it on the first request", async () => {
    mkdirSync(join(repo, "fresh", "1"), { recursive: true });
    cpSync(join(FUNCTIONS, "mlp", "1", "model.onnx"), join(repo, "fresh", "1", "model.onnx"));
    const res = await fetch(`${server.url}/v2/models/fresh/config`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { input: { name: string }[] }).input[0]!.name).toBe("input");
  });

  it("finds two new folders asked for at once, each by its own scan", async () => {
    for (const name of ["one", "two"]) {
      mkdirSync(join(repo, name, "1"), { recursive: true });
      cpSync(join(FUNCTIONS, "simple", "1", "model.onnx"), join(repo, name, "1", "model.onnx"));
    }
    const statuses = await Promise.all(["one", "two"].map(async (name) => (await fetch(`${server.url}/v2/models/${name}/config`)).status));
    expect(statuses).toEqual([200, 200]);
  });

  it("answers 404 for a name with no folder, or no valid name, as before", async () => {
    for (const name of ["nothing_here", "..", ".hidden"]) {
      const res = await fetch(`${server.url}/v2/models/${encodeURIComponent(name)}/config`);
      expect(res.status, name).toBe(404);
    }
  });
});
