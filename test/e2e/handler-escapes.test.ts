import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";

// A careless handler's errors that escape its calls (a throw in a timer, a rejection nobody
// awaits, a non-Error thrown) and its exit calls, against the real CLI in its own process under
// the runtime TENSORFN_RUNTIME names: the process must live on and keep serving.

const HANDLER = `
export function execute(requests: { json(): { mode: string } }[]) {
  const g = globalThis as any;
  for (const request of requests) {
    const mode = request.json().mode;
    if (mode === "timer") setTimeout(() => { throw new Error("boom in a timer"); }, 1);
    if (mode === "reject") Promise.reject(new Error("boom unawaited"));
    if (mode === "string") setTimeout(() => { throw "a bare string"; }, 1);
    if (mode === "exit") g.process.exit(1);
    if (mode === "abort") g.process.abort();
    if (mode === "deno-exit") g.Deno?.exit(1);
  }
  return requests.map(() => ({ ok: true }));
}
`;

let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

function repository(): string {
  const repo = tempRepository();
  mkdirSync(join(repo, "careless", "1"), { recursive: true });
  writeFileSync(join(repo, "careless", "function.yaml"), "backend: handler\nhandler: handler.ts\nmax_batch_size: 0\n");
  writeFileSync(join(repo, "careless", "handler.ts"), HANDLER);
  mkdirSync(join(repo, "fine", "1"), { recursive: true });
  writeFileSync(join(repo, "fine", "function.yaml"), "backend: handler\nhandler: handler.ts\nmax_batch_size: 0\n");
  writeFileSync(join(repo, "fine", "handler.ts"), "export function execute(requests: unknown[]) { return requests.map(() => ({ fine: true })); }\n");
  return repo;
}

async function call(name: string, mode: string): Promise<{ status: number; body: { error?: string; ok?: boolean; fine?: boolean } }> {
  const response = await fetch(`${server!.url}/v1/functions/${name}`, { method: "POST", body: JSON.stringify({ mode }), headers: { "content-type": "application/json" } });
  return { status: response.status, body: await response.json() };
}

describe(`errors that escape a handler (${TARGET_RUNTIME})`, () => {
  it("are caught, attributed to the function, logged once without the module source, counted; exit calls fail only their own request", async () => {
    const repo = repository();
    const command = cliEntry(TARGET_RUNTIME, ["serve", "--repo", repo, "--port", "0"]);
    server = await spawnServer(command[0], command[1], { timeoutMs: 90_000 });

    for (const mode of ["timer", "reject", "string"]) {
      expect(await call("careless", mode)).toEqual({ status: 200, body: { ok: true } });
      // The next request is served only if the process outlived the escape.
      expect(await call("fine", "")).toEqual({ status: 200, body: { fine: true } });
    }
    await server.waitFor(/a bare string/);
    for (const mode of ["exit", "abort", ...(TARGET_RUNTIME === "deno" ? ["deno-exit"] : [])]) {
      const refused = await call("careless", mode);
      expect(refused.status).toBe(500);
      expect(refused.body.error).toMatch(/^function 'careless' execute: failed: (process|Deno)\.(exit|abort)\(\) was refused/);
    }
    // The same escape again: counted, not logged again within the minute.
    expect(await call("careless", "timer")).toEqual({ status: 200, body: { ok: true } });
    expect(await call("fine", "")).toEqual({ status: 200, body: { fine: true } });

    // The last timer fires a millisecond after its answer: read the counter until it shows (bounded).
    let metrics = "";
    let escapes = 0;
    for (let tries = 0; tries < 50 && escapes < 3; tries++) {
      metrics = await (await fetch(`${server.url}/metrics`)).text();
      escapes = Number(/^tensorfn_handler_calls_total\{model="careless",version="1",step="escape",outcome="error"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
    }
    // Three with a stack (two timers, one rejection); a thrown string has none to attribute it by.
    expect(escapes).toBe(3);
    expect(metrics).not.toMatch(/model="fine",version="1",step="escape"/);

    // From the first escape on (the start-up line names the repository as given).
    const all = server.output();
    const output = all.slice(all.lastIndexOf("\n", all.indexOf(" escaped ")));
    expect(output.match(/function 'careless' handler: an uncaught exception escaped it .*: Error: boom in a timer/g)).toHaveLength(1);
    expect(output).toMatch(/function 'careless' handler: an unhandled promise rejection escaped it .*: Error: boom unawaited/);
    expect(output).toMatch(/an uncaught exception whose stack names no handler's file .*: thrown value: a bare string/);
    // Frames name the file relative to the repository; never the compiled source, never the repository's absolute path.
    expect(output).toMatch(/careless\/handler\.ts:\d+:\d+/);
    expect(output).not.toContain("data:text/javascript");
    expect(output).not.toContain(repo);
    expect(output.length).toBeLessThan(20_000);
    expect(server.child.exitCode).toBeNull();
  });
});
