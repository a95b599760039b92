import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Readiness Kubernetes can trust (Triton's semantics): the server is ready once the functions its
// control mode loads are; liveness never looks at models; per-function readiness apart.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const get = async (path: string) => {
  const r = await fetch(`${server!.url}${path}`);
  return [r.status, ((await r.json()) as { error?: string }).error ?? "ok"] as const;
};

/** `simple` and `mlp`, plus `broken` (a function.yaml that does not parse). */
function repository(): string {
  const repo = tempRepository("simple", "mlp");
  mkdirSync(join(repo, "broken", "1"), { recursive: true });
  writeFileSync(join(repo, "broken", "function.yaml"), "max_batch_size: lots\n");
  return repo;
}

describe("server readiness per control mode", () => {
  it("explicit: ready with only the --load-model function loaded; an unload on purpose keeps it ready", async () => {
    server = await startServer({ repository: repository(), controlMode: "explicit", loadModels: ["simple"] });
    expect(await get("/v2/health/ready")).toEqual([200, "ok"]);
    expect(await get("/v2/models/simple/ready")).toEqual([200, "ok"]);
    expect((await get("/v2/models/mlp/ready"))[0]).toBe(503);
    expect((await fetch(`${server.url}/v2/repository/models/simple/unload`, { method: "POST" })).status).toBe(200);
    expect(await get("/v2/health/ready")).toEqual([200, "ok"]);
  });

  it("explicit: a --load-model function that cannot load keeps the server not ready; --strict-readiness false is ready when it answers", async () => {
    const repo = repository();
    server = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["simple", "broken"] });
    const [status, error] = await get("/v2/health/ready");
    expect(status).toBe(503);
    expect(error).toMatch(/^Server not ready: 1 function the control mode loads is not ready; see POST \/v2\/repository\/index$/);
    expect(await get("/v2/health/live")).toEqual([200, "ok"]);
    await server.close();
    server = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["simple", "broken"], strictReadiness: false });
    expect(await get("/v2/health/ready")).toEqual([200, "ok"]);
    expect((await get("/v2/models/broken/ready"))[0]).toBe(503);
  });

  it("none waits for every function; lazy for none (each loads on its first request)", async () => {
    const repo = repository();
    server = await startServer({ repository: repo, controlMode: "none" });
    expect(await get("/v2/health/ready")).toEqual([503, "Server not ready: 1 function the control mode loads is not ready; see POST /v2/repository/index"]);
    expect(await get("/v2/health/live")).toEqual([200, "ok"]);
    await server.close();
    server = await startServer({ repository: repo, controlMode: "lazy" });
    expect(await get("/v2/health/ready")).toEqual([200, "ok"]);
    expect((await get("/v2/models/broken/ready"))[0]).toBe(503);
  });
});
