import { describe, expect, it } from "vitest";
import { createShutdown, EXIT_SHUTDOWN_TIMEOUT, RequestTracker } from "../../../adapters/graceful-shutdown.ts";
import type { ShutdownOptions } from "../../../adapters/graceful-shutdown.ts";
import type { Listener } from "../../../adapters/host.ts";
import { createRuntime } from "../../../runtime/mod.ts";
import type { Reply, RouterRequest } from "../../../runtime/mod.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryPlatform } from "../../support/memory-platform.ts";

/** A listener whose close() resolves when the test says its requests were answered. */
function heldListener() {
  let release!: () => void;
  const closed = new Promise<void>((done) => (release = done));
  const listener: Listener & { closing: boolean } = {
    url: "http://127.0.0.1:1",
    closing: false,
    close: () => {
      listener.closing = true;
      return closed;
    },
  };
  return { listener, release };
}

function setup(overrides: Partial<ShutdownOptions> = {}) {
  const clock = new FakeClock();
  const lines: string[] = [];
  const exits: number[] = [];
  const events: string[] = [];
  const { listener, release } = heldListener();
  const tracker = new RequestTracker();
  const shutdown = createShutdown({
    timeoutMs: 30_000,
    clock,
    log: { info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) },
    tracker,
    drain: () => events.push("drain"),
    listeners: () => [listener],
    finish: async () => void events.push("finish"),
    exit: (code) => void exits.push(code),
    ...overrides,
  });
  return { clock, lines, exits, events, listener, release, tracker, shutdown };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("createShutdown()", () => {
  it("drains, closes the listeners, finishes, then exits 0", async () => {
    const t = setup();
    t.shutdown("SIGTERM");
    expect(t.events).toEqual(["drain"]);
    expect(t.listener.closing).toBe(true);
    await flush();
    expect(t.exits).toEqual([]); // still waiting for the listener's requests
    t.release();
    await flush();
    expect(t.events).toEqual(["drain", "finish"]);
    expect(t.exits).toEqual([0]);
    expect(t.clock.pendingTimers()).toBe(0);
  });

  it("exits EXIT_SHUTDOWN_TIMEOUT (1) with one error line when the timeout passes first", async () => {
    const t = setup({ timeoutMs: 5000 });
    const held = t.tracker.wrap(() => new Promise<Reply>(() => {}));
    void held(routerRequest("/v2/models/simple/infer", "POST"));
    t.shutdown("SIGTERM");
    t.clock.advance(4999);
    expect(t.exits).toEqual([]);
    t.clock.advance(1);
    expect(t.exits).toEqual([EXIT_SHUTDOWN_TIMEOUT]);
    expect(t.lines.filter((l) => l.startsWith("error"))).toEqual([
      "error shutdown timeout: 1 request(s) still in flight after 5 s (--shutdown-timeout); closing their connections and exiting 1",
    ]);
    t.release(); // a late drain does not exit a second time
    await flush();
    expect(t.exits).toEqual([1]);
  });

  it("takes a repeat within a second as the same signal, and a later one as a request to exit now", () => {
    const t = setup();
    t.shutdown("SIGTERM");
    t.clock.advance(10);
    t.shutdown("SIGTERM"); // npm forwarding the process group's SIGTERM
    expect(t.exits).toEqual([]);
    t.clock.advance(2000);
    t.shutdown("SIGINT");
    expect(t.exits).toEqual([130]);
    expect(t.lines.at(-1)).toMatch(/^warn SIGINT again during the shutdown: exiting now/);
  });
});

describe("RequestTracker", () => {
  it("counts the requests the router takes, and marks its replies `Connection: close` once draining", async () => {
    const tracker = new RequestTracker();
    let finish = () => {};
    const router = tracker.wrap(() => new Promise((resolve) => (finish = () => resolve({ status: 200, headers: { "content-type": "text/plain" }, body: "ok" }))));
    const first = router(routerRequest("/"));
    expect([tracker.received, tracker.inFlight]).toEqual([1, 1]);
    finish();
    expect((await first).headers.connection).toBeUndefined();
    tracker.startDraining();
    const second = router(routerRequest("/"));
    finish();
    expect((await second).headers).toEqual({ "content-type": "text/plain", connection: "close" });
    expect([tracker.received, tracker.inFlight]).toEqual([2, 0]);
  });
});

describe("RequestTracker event streams", () => {
  it("startDraining() ends an event stream that would never end, and cancels its source", async () => {
    const tracker = new RequestTracker();
    let cancelled = false;
    const source = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode("data: 1\n\n")),
      cancel: () => void (cancelled = true),
    });
    const router = tracker.wrap(async () => ({ status: 200, headers: { "content-type": "text/event-stream; charset=utf-8" }, body: source }));
    const reply = await router(routerRequest("/v2/dashboard/events"));
    const reader = (reply.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: 1\n\n");
    tracker.startDraining();
    expect((await reader.read()).done).toBe(true);
    expect(cancelled).toBe(true);
  });
});

describe("Runtime.drain()", () => {
  it("turns GET /v2/health/ready to 503 while live stays 200", async () => {
    const runtime = await createRuntime({ platform: new MemoryPlatform({ "repo/.keep": "" }), repository: "repo", backends: {} });
    const get = (path: string) => runtime.fetch(new Request(`http://127.0.0.1${path}`));
    expect((await get("/v2/health/ready")).status).toBe(200);
    runtime.drain();
    const ready = await get("/v2/health/ready");
    expect(ready.status).toBe(503);
    expect(await ready.text()).toMatch(/shutting down/);
    expect((await get("/v2/health/live")).status).toBe(200);
    await runtime.stop();
  });
});

/** A request as an adapter hands it to the router, its body empty. */
function routerRequest(url: string, method = "GET"): RouterRequest {
  return { method, url, header: () => undefined, body: { signal: new AbortController().signal, read: async () => new Uint8Array() } };
}
