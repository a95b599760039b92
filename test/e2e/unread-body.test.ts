import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "node:net";
import { startServer, TARGET_RUNTIME } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";

// An answer written before its request's body arrived (an unknown model, a route that reads no
// body) must not cost the connection's next request: Node reads and drops the rest; Deno's
// node:http reset the next request instead (the fast lane's case, at 600 KiB, failed this test),
// so there such an answer says `Connection: close` (requestListener's `drainsUnread`).
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Sends the head, waits for the answer, then the body and a second request on the same socket. */
async function answerBeforeBody(path: string, bodyBytes: number): Promise<{ first: string; second: string | undefined; closes: boolean }> {
  const { hostname, port } = new URL(server.url);
  const socket = connect(Number(port), hostname);
  let text = "";
  let failed: string | undefined;
  socket.on("data", (chunk) => (text += chunk));
  socket.on("error", (error: NodeJS.ErrnoException) => (failed = error.code));
  const closed = new Promise<void>((done) => socket.on("close", () => done()));
  const until = async (test: () => boolean) => {
    for (let i = 0; i < 200 && !test() && !socket.destroyed; i++) await new Promise((r) => setTimeout(r, 10));
  };
  // The head and a part of the body; the rest once the answer came.
  const part = bodyBytes >> 2;
  socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${bodyBytes}\r\n\r\n${" ".repeat(part)}`);
  await until(() => /\r\n\r\n[\s\S]*\}/.test(text));
  const first = text;
  const closes = /\r\nconnection: close\r\n/i.test(first);
  if (!socket.destroyed) socket.write(Buffer.alloc(bodyBytes - part, 0x20));
  if (!closes && !socket.destroyed) socket.write("GET /v2/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  await until(() => (text.match(/HTTP\/1\.1 \d+/g) ?? []).length >= 2);
  socket.end();
  await closed;
  const statuses = text.match(/HTTP\/1\.1 \d+/g) ?? [];
  return { first: statuses[0] ?? `nothing (${failed ?? "closed"})`, second: statuses[1] ?? failed, closes };
}

describe(`an answer before the body (${TARGET_RUNTIME})`, () => {
  it.each([
    ["the fast lane (unknown model)", "/v2/models/nope/infer"],
    ["the app (unknown route)", "/v2/nope"],
  ])("%s: the connection's next request is answered, or the answer closed the connection", async (_name, path) => {
    for (const bytes of [64 * 1024, 600 * 1024, 2 * 1024 * 1024]) {
      const result = await answerBeforeBody(path, bytes);
      expect(result.first, JSON.stringify(result)).toMatch(/^HTTP\/1\.1 404/);
      if (!result.closes) expect(result.second, JSON.stringify(result)).toBe("HTTP/1.1 200");
    }
  });

  it("a large upload refused after its first megabyte: the client, still sending, reads the answer (a lingering close), not EPIPE", async () => {
    const { hostname, port } = new URL(server.url);
    for (let round = 0; round < 3; round++) {
      const outcome = await new Promise<string>((resolve) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(`POST /v2/models/nope/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n`);
          socket.write("0,".repeat(500_000));
        });
        let text = "";
        socket.on("data", (chunk) => {
          text += chunk;
          if (text.includes("}")) {
            socket.destroy();
            resolve(text.split("\r\n")[0]!);
          }
        });
        socket.on("error", (error: NodeJS.ErrnoException) => resolve(`error ${error.code}`));
        setTimeout(() => resolve("no answer within 5 s"), 5000).unref();
      });
      expect(outcome).toBe("HTTP/1.1 404 Not Found");
    }
  });
});
