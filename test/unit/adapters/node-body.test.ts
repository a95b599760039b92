import { createServer } from "node:http";
import type { Server } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NodeBody } from "../../../adapters/node/request-listener.ts";

// NodeBody against a real node:http server and a raw socket, so the test decides how the bytes
// arrive: with the head in one write, or in pieces the server reads on later turns.
let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

interface Seen {
  body: string | undefined;
  ended: boolean;
  /** The stream's mode after the read: null when the body came from its buffer without listeners. */
  flowing: boolean | null;
}

/**
 * A server whose handler awaits a few microtasks (as the infer route does) and then reads with
 * NodeBody: `take` first where asked (as the infer route does), `read` when it gives nothing.
 */
async function start(limit = 1024, options: { take?: boolean; taken?: boolean[] } = {}): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer(async (incoming, outgoing) => {
    const body = new NodeBody(incoming, outgoing);
    for (let i = 0; i < 3; i++) await null;
    const taken = options.take ? body.take(limit) : undefined;
    options.taken?.push(taken !== undefined);
    const bytes = taken ?? (await body.read(limit));
    seen.push({ body: bytes && new TextDecoder().decode(bytes), ended: body.ended, flowing: incoming.readableFlowing });
    outgoing.end(bytes === undefined ? "too large" : `got ${bytes.byteLength}`);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, seen };
}

const request = (body: string) => `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** Writes `pieces` to one keep-alive connection, `gapMs` apart, and resolves once `answers` replies came. */
function send(port: number, pieces: string[], answers: number, gapMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (d) => {
      text += d;
      if ((text.match(/HTTP\/1\.1 200/g) ?? []).length === answers && /got \d+$|too large$/.test(text)) {
        socket.end();
        resolve(text);
      }
    });
    socket.on("error", reject);
    socket.on("connect", async () => {
      for (const piece of pieces) {
        socket.write(piece);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

describe("NodeBody.read", () => {
  it("takes a body that arrived with its head from the stream's buffer, and the connection serves the next request", async () => {
    const { port, seen } = await start();
    const one = JSON.stringify({ inputs: [{ name: "x", data: [1, 2, 3] }] });
    await send(port, [request(one) + request("second")], 2);
    expect(seen).toEqual([
      { body: one, ended: true, flowing: null },
      { body: "second", ended: true, flowing: null },
    ]);
  });

  it("waits for a body that arrives in pieces after its head", async () => {
    const { port, seen } = await start();
    const head = `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n`;
    await send(port, [head, "01234", "56789", request("after")], 2, 20);
    expect(seen.map((s) => s.body)).toEqual(["0123456789", "after"]);
  });

  it("`take()` gives a body that arrived whole at once and nothing for one still arriving, which `read()` then waits for", async () => {
    const taken: boolean[] = [];
    const { port, seen } = await start(1024, { take: true, taken });
    await send(port, [request("whole")], 1);
    const head = `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n`;
    await send(port, [head, "01234", "56789"], 1, 20);
    expect(seen.map((s) => s.body)).toEqual(["whole", "0123456789"]);
    expect(taken).toEqual([true, false]);
    expect(seen[0]).toMatchObject({ ended: true, flowing: null });
  });

  it("hands over plain Uint8Arrays that stay as they were while the connection reads on", async () => {
    const kept: { bytes: Uint8Array; plain: boolean }[] = [];
    server = createServer(async (incoming, outgoing) => {
      const body = new NodeBody(incoming, outgoing);
      await null;
      const bytes = body.take(1024) ?? (await body.read(1024))!;
      // Not a Buffer: its slice() is a view, and code downstream expects a copy from slice().
      kept.push({ bytes, plain: Object.getPrototypeOf(bytes) === Uint8Array.prototype });
      outgoing.end(`got ${bytes.byteLength}`);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const head = `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n`;
    // Whole with its head, then in pieces (several chunks joined), then many more on the same connection.
    await send(port, [request("whole"), head, "01234", "56789", ...Array.from({ length: 20 }, (_, i) => request(`next ${i}`.padEnd(40, "x")))], 22, 20);
    expect(kept.every((k) => k.plain)).toBe(true);
    expect(kept.map((k) => new TextDecoder().decode(k.bytes))).toEqual(["whole", "0123456789", ...Array.from({ length: 20 }, (_, i) => `next ${i}`.padEnd(40, "x"))]);
  });

  it("stops at the limit, whole or in pieces", async () => {
    const { port, seen } = await start(8);
    await send(port, [request("0123456789")], 1);
    expect(seen[0]!.body).toBeUndefined();
  });
});
