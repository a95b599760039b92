import { describe, expect, it } from "vitest";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";
import { keepAliveLoad, partialRequest } from "../support/keep-alive-load.ts";

// Graceful shutdown under the runtime TENSORFN_RUNTIME names (node by default), signalled the way
// process managers and `npm start` wrappers do it: SIGTERM to the whole process group.

const READY_HEAD = "GET /v2/health/ready HTTP/1.1\r\nHost: 127.0.0.1\r\n";

function start(args: string[], command = cliEntry(TARGET_RUNTIME, ["serve", "--repo", tempRepository("simple"), "--port", "0", ...args])) {
  return spawnServer(command[0], command[1], { timeoutMs: 90_000 });
}

function signalGroup(server: SpawnedServer): void {
  process.kill(-server.child.pid!, "SIGTERM");
}

/** The exit code, or the signal's name when the process died of one (npm re-raises it on itself). */
function exited(server: SpawnedServer): Promise<number | string | null> {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return new Promise((done) => child.once("exit", (code, signal) => done(code ?? signal)));
}

/** The server's last line: how many requests it read and answered (graceful-shutdown.ts). */
function served(output: string): { received: number; answered: number } | undefined {
  const match = /shut down in \d+ ms: (\d+) requests received, (\d+) answered/.exec(output);
  return match ? { received: Number(match[1]), answered: Number(match[2]) } : undefined;
}

/**
 * 16 keep-alive clients send `simple` inferences back to back; the process group gets SIGTERM.
 * Telling "accepted and lost" from "refused before the server read it" from the client side alone
 * is unreliable (a reset can mean either), so the server reports how many requests its fetch
 * handler received and the test checks the clients got exactly that many responses: then every
 * client error (ECONNREFUSED on a new connection, a socket closed while idle) is a request the
 * server never read.
 */
async function drainUnderLoad(server: SpawnedServer) {
  const warm = await fetch(`${server.url}/v2/models/simple/ready`);
  expect(warm.status).toBe(200);
  // A readiness request whose headers are half sent: the server is reading it when the signal comes.
  const probe = await partialRequest(server.url, READY_HEAD);
  const load = keepAliveLoad(server.url, { clients: 16, deadline: performance.now() + 45_000 });
  const loaded = performance.now() + 20_000;
  while (load.report.correct < 200 && load.report.errors.length === 0 && performance.now() < loaded) await new Promise((r) => setTimeout(r, 20));
  expect(load.report.errors).toEqual([]);
  const signalledAt = performance.now();
  signalGroup(server);
  await server.waitFor(/SIGTERM: shutting down/, 20_000);
  probe.socket.write("\r\n");
  // A wrapper may exit before the server it started: the server's last line is the end.
  const [code] = await Promise.all([exited(server), server.waitFor(/shut down in \d+ ms/, 20_000)]);
  const exitMs = performance.now() - signalledAt;
  load.stop();
  const report = await load.done();
  const readiness = await probe.response;
  return { code, exitMs, report, readiness, signalledAt, served: served(server.output()) };
}

describe(`graceful shutdown (${TARGET_RUNTIME})`, () => {
  // `npm start` puts npm and a shell above the server; npm forwards the group's SIGTERM once more.
  // Bun's own server (Bun.serve, its default) and node:http (`--http-server node`), which drains
  // like Node's.
  const launches: [string, [string, string[]] | undefined, string[]][] = [[TARGET_RUNTIME, undefined, []]];
  if (TARGET_RUNTIME === "node") launches.push(["npm start", ["npm", ["start", "--", "--port", "0", "--shutdown-timeout", "15"]], []]);
  if (TARGET_RUNTIME === "bun") launches.push(["bun --http-server node", undefined, ["--http-server", "node"]]);
  it.each(launches)("SIGTERM to the process group (%s) under 16 keep-alive clients: readiness 503, every request the server read answered (on node:http every one a client sent), exit 0", async (name, command, flags) => {
    const server = await start(["--shutdown-timeout", "15", ...flags], command);
    const nodeHttp = TARGET_RUNTIME !== "bun" || flags.includes("node");
    const result = await drainUnderLoad(server);
    console.log(
      `${name}: exit ${result.code} ${Math.round(result.exitMs)} ms after SIGTERM; ${result.report.correct} correct, ` +
        `${result.report.connectionClose} with Connection: close; client errors ${JSON.stringify(countBy(result.report.errors.map((e) => e.code)))}; server ${JSON.stringify(result.served)}`,
    );
    expect(result.report.wrong).toEqual([]);
    // npm forwards the signal to its shell, which dies of it, and npm then re-raises it on itself.
    expect(result.code).toBe(command ? "SIGTERM" : 0);
    expect(result.exitMs).toBeLessThan(15_000);
    expect(result.readiness).toMatch(/^HTTP\/1\.1 503/);
    expect(result.readiness).toMatch(/shutting down/);
    expect(result.readiness.toLowerCase()).toMatch(/\r\nconnection: close\r\n/);
    // Every error came after the signal, and is one the server never read (the counts match).
    // On node:http each is a new connection refused: no request a client sent on a connection the
    // server had accepted was reset. Bun.serve closes idle keep-alive sockets when it stops and
    // offers no way to close one alone, so there a request sent at that instant can still be reset
    // (docs/reference/cli.md, Graceful shutdown).
    expect(result.report.errors.every((e) => e.at >= result.signalledAt)).toBe(true);
    if (nodeHttp) expect(result.report.errors.filter((e) => e.code !== "ECONNREFUSED")).toEqual([]);
    expect(result.served).toBeDefined();
    expect(result.served!.answered).toBe(result.served!.received);
    // +1 the warm-up fetch, +1 the readiness probe.
    expect(result.report.responses + 2).toBe(result.served!.received);
  });

  it("a request still in flight at --shutdown-timeout is cut, with one log line and exit code 1", async () => {
    const server = await start(["--shutdown-timeout", "1"]);
    // A client that sent its headers and part of the body, then stalled: the server has accepted
    // the request and waits for the rest, past the timeout.
    const stuck = await partialRequest(server.url, "POST /v2/models/simple/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"inputs\":");
    await new Promise((r) => setTimeout(r, 1000)); // let the server read it, even on a busy machine
    const signalledAt = performance.now();
    signalGroup(server);
    const code = await exited(server);
    const exitMs = performance.now() - signalledAt;
    expect(code).toBe(1);
    expect(exitMs).toBeGreaterThanOrEqual(900);
    expect(exitMs).toBeLessThan(10_000);
    expect(server.output()).toMatch(/shutdown timeout: 1 request\(s\) still in flight after 1 s \(--shutdown-timeout\); closing their connections and exiting 1/);
    expect(await stuck.response).toBe("");
  });

  it("`tensorfn dev` with a dashboard event stream open still exits 0 at once: the drain ends the stream", async () => {
    const server = await start([], cliEntry(TARGET_RUNTIME, ["dev", tempRepository("simple"), "--port", "0", "--shutdown-timeout", "20"]));
    const events = await fetch(`${server.url}/v2/dashboard/events`);
    expect(events.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = events.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    const signalledAt = performance.now();
    signalGroup(server);
    expect(await exited(server)).toBe(0);
    expect(performance.now() - signalledAt).toBeLessThan(5000);
    for (let i = 0; i < 100 && !(await reader.read().catch(() => ({ done: true }))).done; i++);
  });

  it("a token stream in flight at SIGTERM runs to its end ([DONE], every token), then the process exits 0", async () => {
    const server = await start([], cliEntry(TARGET_RUNTIME, ["serve", "--repo", tempRepository("tiny_gpt"), "--port", "0", "--shutdown-timeout", "60"]));
    const body = JSON.stringify({ model: "tiny_gpt", prompt: "a", max_tokens: 200, ignore_eos: true, stream: true });
    const res = await fetch(`${server.url}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    signalGroup(server);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
    const events = text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const last = JSON.parse(events.at(-2)!.slice(6)) as { choices: { finish_reason: string }[]; usage?: { completion_tokens: number } };
    expect(last.choices[0]!.finish_reason).toBe("length");
    expect(await exited(server)).toBe(0);
  }, 120_000);

  it("a second SIGTERM during the drain exits at once with 143", async () => {
    const server = await start(["--shutdown-timeout", "30"]);
    const stuck = await partialRequest(server.url, "POST /v2/models/simple/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n{");
    await new Promise((r) => setTimeout(r, 500));
    signalGroup(server);
    await server.waitFor(/SIGTERM: shutting down/, 20_000);
    await new Promise((r) => setTimeout(r, 1200)); // past the window in which a repeat counts as the same signal
    const again = performance.now();
    signalGroup(server);
    expect(await exited(server)).toBe(143);
    expect(performance.now() - again).toBeLessThan(5000);
    expect(server.output()).toMatch(/SIGTERM again during the shutdown: exiting now with 1 request\(s\) in flight/);
    stuck.socket.destroy();
  });
});

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
