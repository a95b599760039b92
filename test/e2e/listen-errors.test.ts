import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import type { AddressInfo, Server } from "node:net";
import { tempRepository } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";

// A port the server cannot listen on ends its start with a line naming the address and a non-zero
// exit, under Node, Bun and Deno: a pod or a script must not wait on a server that never serves.

let taken: Server;
let port: number;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  port = (taken.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

function run(args: string[]): Promise<{ code: number | null; output: string; ms: number }> {
  const [command, rest] = cliEntry(TARGET_RUNTIME, ["serve", "--repo", tempRepository("simple"), ...args]);
  const started = performance.now();
  const child = spawn(command, rest, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d));
  child.stderr.on("data", (d: Buffer) => (output += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: performance.now() - started });
    }),
  );
}

describe(`a port taken (${TARGET_RUNTIME})`, () => {
  for (const flag of ["--port", "--grpc-port", "--metrics-port"]) {
    it(`${flag}: exits 2 at once, naming the address`, { timeout: 60_000 }, async () => {
      const args = flag === "--port" ? ["--port", String(port)] : ["--port", "0", flag, String(port)];
      const { code, output, ms } = await run(args);
      expect(code, output).toBe(2);
      expect(output).toContain(`tensorfn: ${flag} ${port}: 127.0.0.1:${port} is already in use`);
      expect(output).not.toMatch(/stray|uncaught/i);
      expect(ms).toBeLessThan(15_000); // the whole start, runtime included; the listen fails at once
    });
  }
});
