import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "undici";
import type { Dispatcher } from "undici";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

/** Hangs up on an event stream; undici reports its own abort as an error event, which is expected here. */
function close(response: { body: { on(event: "error", listener: () => void): unknown; destroy(): unknown } }): void {
  response.body.on("error", () => {});
  response.body.destroy();
}

// The server's default cap (DEFAULT_MAX_DASHBOARD_STREAMS): the CLI has no flag for it.
const CAP = 32;

describe("dashboard event streams", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ repository: tempRepository("simple"), dashboard: true });
  }, 90_000);
  afterAll(async () => await server?.close());

  const responses: Dispatcher.ResponseData[] = [];
  const open = async () => {
    const res = await request(`${server.url}/v2/dashboard/events`);
    responses.push(res);
    return res;
  };
  // Not `for await`: leaving that loop would close the stream.
  const firstEvent = (res: Dispatcher.ResponseData) => new Promise<string>((resolve) => res.body.once("data", (chunk) => resolve(String(chunk))));

  it(`serves ${CAP} streams at once, each starting with a snapshot; the next gets 503 JSON until one closes`, async () => {
    const streams = await Promise.all(Array.from({ length: CAP }, open));
    try {
      expect(streams.map((s) => s.statusCode)).toEqual(new Array(CAP).fill(200));
      for (const event of await Promise.all(streams.map(firstEvent))) expect(event).toMatch(/^data: \{"functions":/);
      const refused = await open();
      expect(refused.statusCode).toBe(503);
      expect(refused.headers["retry-after"]).toBeDefined();
      expect(((await refused.body.json()) as { error: string }).error).toMatch(/too many dashboard event streams/);

      close(streams.pop()!);
      // The server notices the closed socket on its own schedule: retry (bounded) until a place is free.
      let again: Dispatcher.ResponseData | undefined;
      for (let i = 0; i < 50 && again?.statusCode !== 200; i++) {
        if (again) close(again);
        again = await open();
      }
      expect(again!.statusCode).toBe(200);
      streams.push(again!);
    } finally {
      for (const res of responses) close(res);
    }
  }, 30_000);
});
