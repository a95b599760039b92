import { connect } from "node:net";
import type { Socket } from "node:net";
import { Pool } from "undici";

/** What the clients of a keep-alive load saw. */
export interface LoadReport {
  /** HTTP responses of any status: each one is a request the server read and answered. */
  responses: number;
  /** 200s whose outputs were the right sums and differences. */
  correct: number;
  /** Responses that were not a correct 200, with what was wrong. */
  wrong: string[];
  /** Responses marked `Connection: close` (sent while the server drained). */
  connectionClose: number;
  /** Failed requests by error code (ECONNREFUSED, UND_ERR_SOCKET…), each with its time. */
  errors: { code: string; at: number }[];
}

/**
 * `clients` keep-alive connections (an undici Pool, one request at a time on each) sending
 * `simple` inferences back to back. A client stops at its first connection error, when `stop()`
 * is called, or at `deadline` (performance.now()), so the loop is bounded.
 */
export function keepAliveLoad(url: string, { clients, deadline }: { clients: number; deadline: number }) {
  const pool = new Pool(url, { connections: clients, pipelining: 1 });
  const report: LoadReport = { responses: 0, correct: 0, wrong: [], connectionClose: 0, errors: [] };
  let stopped = false;
  let sequence = 0;
  const client = async () => {
    while (!stopped && performance.now() < deadline) {
      const base = sequence++ % 100_000;
      const input0 = Array.from({ length: 16 }, (_, i) => base + i);
      const body = JSON.stringify({
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: input0 },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array(16).fill(1) },
        ],
      });
      let response;
      try {
        response = await pool.request({ path: "/v2/models/simple/infer", method: "POST", body, headers: { "content-type": "application/json" } });
      } catch (error) {
        report.errors.push({ code: (error as { code?: string }).code ?? (error as Error).message, at: performance.now() });
        return;
      }
      report.responses++;
      if (response.headers.connection === "close") report.connectionClose++;
      let text: string;
      try {
        text = await response.body.text();
      } catch (error) {
        report.wrong.push(`response body cut: ${(error as Error).message}`);
        return;
      }
      if (response.statusCode !== 200) {
        report.wrong.push(`${response.statusCode}: ${text.slice(0, 200)}`);
        continue;
      }
      const outputs = (JSON.parse(text) as { outputs: { name: string; data: number[] }[] }).outputs;
      const sum = outputs.find((o) => o.name === "OUTPUT0")?.data;
      const difference = outputs.find((o) => o.name === "OUTPUT1")?.data;
      if (input0.every((x, i) => sum?.[i] === x + 1 && difference?.[i] === x - 1)) report.correct++;
      else report.wrong.push(`wrong outputs for base ${base}: ${text.slice(0, 200)}`);
    }
  };
  const running = Promise.all(Array.from({ length: clients }, client));
  return {
    report,
    /** Resolves once every client stopped; closes the pool. */
    async done(): Promise<LoadReport> {
      await running;
      await pool.destroy();
      return report;
    },
    stop(): void {
      stopped = true;
    },
  };
}

/**
 * A raw connection that has sent `head` (part of a request) and nothing more: the request the
 * server is reading when a shutdown begins. `response` resolves with everything the server sent
 * once it closes the connection.
 */
export async function partialRequest(url: string, head: string): Promise<{ socket: Socket; response: Promise<string> }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  let received = "";
  const response = new Promise<string>((resolve) => {
    socket.on("data", (chunk) => (received += chunk.toString()));
    socket.on("error", () => {});
    socket.once("close", () => resolve(received));
  });
  socket.write(head);
  return { socket, response };
}
