import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "undici";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";

type Init = { method?: string; headers?: Record<string, string>; body?: string };

/** undici's request, since fetch would not let a test set Host. */
async function call(url: string, path: string, init: Init = {}) {
  const res = await request(`${url}${path}`, { method: (init.method ?? "GET") as "GET", headers: init.headers, body: init.body });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

const simpleBody = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) });

describe("control routes without keys answer only loopback requests from their own origin", () => {
  let server: TestServer;
  let port: string;
  beforeAll(async () => {
    server = await startServer({ repository: tempRepository("simple", "mlp"), dashboard: true });
    port = new URL(server.url).port;
  }, 90_000);
  afterAll(async () => await server?.close());

  const post = (path: string, headers: Record<string, string> = {}, body?: string) => call(server.url, path, { method: "POST", headers, body });

  it("accepts the loopback names on any port (port forwarding keeps working)", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "localhost:9999", "127.0.0.1"]) {
      expect((await post("/v2/repository/index", { host })).status, host).toBe(200);
    }
  });

  it("refuses a DNS-rebinding Host with 403 and a JSON error naming it", async () => {
    for (const host of [`evil.example:${port}`, `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`, "192.168.1.20:8000"]) {
      const res = await post("/v2/repository/models/simple/unload", { host });
      expect(res.status, host).toBe(403);
      expect(res.json().error).toContain(`Host '${host}'`);
    }
    for (const path of ["/v2/trace?seconds=1", "/", "/v2/dashboard/snapshot", "/v2/dashboard/events"]) {
      expect((await call(server.url, path, { headers: { host: `evil.example:${port}` } })).status, path).toBe(403);
    }
  });

  it("refuses a cross-site Origin (a page on another site, or another local port) with 403", async () => {
    for (const origin of ["http://evil.example", `http://evil.example:${port}`, "http://localhost:3000", `http://127.0.0.1:${Number(port) + 1}`, "null"]) {
      const res = await post("/v2/repository/models/simple/load", { origin });
      expect(res.status, origin).toBe(403);
      expect(res.json().error).toMatch(/Origin/);
    }
    expect((await post("/v2/repository/index", { origin: server.url })).status).toBe(200);
  });

  it("refuses a text/plain (or form, or a page's untyped) body to a control route, and registers nothing", async () => {
    // A body the old server took from any page: it loaded the function.
    const body = "{}";
    for (const type of ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const res = await post("/v2/repository/models/mlp/load", { "content-type": type }, body);
      expect(res.status, type).toBe(403);
      expect(res.json().error).toMatch(/application\/json/);
    }
    // Untyped from a page (a Blob body carries the page's Origin, here the server's own): refused too.
    const untyped = await post("/v2/repository/models/mlp/load", { origin: server.url }, body);
    expect(untyped.status).toBe(403);
    const index = (await post("/v2/repository/index")).json() as { name: string; state?: string }[];
    expect(index.find((r) => r.name === "mlp")?.state).not.toBe("READY");
    // An empty body, as the dashboard's buttons and bench/ send, and a JSON one stay fine.
    expect((await post("/v2/repository/models/mlp/load")).status).toBe(200);
    expect((await post("/v2/repository/index", { "content-type": "application/json" }, '{"ready":true}')).status).toBe(200);
    // Untyped JSON from no page at all (Triton's Python client sends no Content-Type) is served.
    expect((await post("/v2/repository/index", {}, '{"ready":true}')).status).toBe(200);
  });

  it("leaves inference and metadata alone: they are not control routes", async () => {
    const headers = { host: `evil.example:${port}`, origin: "http://evil.example" };
    expect((await call(server.url, "/v2/models/simple/infer", { method: "POST", headers, body: simpleBody })).status).toBe(200);
    expect((await call(server.url, "/v2/models/simple", { headers })).status).toBe(200);
  });

  it("sends no CORS headers when CORS is off, preflight or not", async () => {
    const origin = "http://app.example";
    const get = await call(server.url, "/v2/models/simple", { headers: { origin } });
    const preflight = await call(server.url, "/v2/models/simple/infer", { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
    for (const res of [get, preflight]) expect(Object.keys(res.headers).filter((h) => h.startsWith("access-control-"))).toEqual([]);
  });
});

describe("CORS when configured (--cors-origin)", () => {
  let server: TestServer;
  const ORIGIN = "http://app.example:5173";
  beforeAll(async () => {
    server = await startServer({ repository: tempRepository("simple"), corsOrigins: [ORIGIN], apiKeys: ["cors-api-key"] });
  }, 90_000);
  afterAll(async () => await server?.close());

  it("answers a preflight without a key: methods, headers (binary extension included), max-age", async () => {
    const res = await call(server.url, "/v2/models/simple/infer", {
      method: "OPTIONS",
      headers: { origin: ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "authorization, inference-header-content-length, content-type" },
    });
    expect(res.status).toBe(204);
    expect(res.headers["access-control-allow-origin"]).toBe(ORIGIN);
    expect(String(res.headers["access-control-allow-methods"]).split(",")).toEqual(expect.arrayContaining(["GET", "POST"]));
    const allowed = String(res.headers["access-control-allow-headers"]).toLowerCase().split(",");
    expect(allowed).toEqual(expect.arrayContaining(["authorization", "content-type", "content-encoding", "inference-header-content-length"]));
    expect(res.headers["access-control-max-age"]).toBe("600");
    expect(String(res.headers.vary)).toMatch(/Origin/i);
  });

  it("marks responses readable by the allowed origin, 401s included, and exposes Inference-Header-Content-Length", async () => {
    const ok = await call(server.url, "/v2/models/simple/infer", { method: "POST", headers: { origin: ORIGIN, authorization: "Bearer cors-api-key" }, body: simpleBody });
    expect(ok.status).toBe(200);
    expect(ok.headers["access-control-allow-origin"]).toBe(ORIGIN);
    expect(String(ok.headers["access-control-expose-headers"]).toLowerCase()).toContain("inference-header-content-length");
    const denied = await call(server.url, "/v2/models/simple/infer", { method: "POST", headers: { origin: ORIGIN }, body: simpleBody });
    expect(denied.status).toBe(401);
    expect(denied.headers["access-control-allow-origin"]).toBe(ORIGIN);
  });

  it("gives another origin no Access-Control-Allow-Origin", async () => {
    const res = await call(server.url, "/v2/models/simple/infer", { method: "OPTIONS", headers: { origin: "http://evil.example", "access-control-request-method": "POST" } });
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("trusts the configured origin on control routes too (loopback Host still required)", async () => {
    expect((await call(server.url, "/v2/repository/index", { method: "POST", headers: { origin: ORIGIN } })).status).toBe(200);
    expect((await call(server.url, "/v2/repository/index", { method: "POST", headers: { origin: "http://evil.example" } })).status).toBe(403);
  });
});

describe("tensorfn dev", () => {
  it("says at startup that control routes are loopback-only without an admin key", async () => {
    const server = await spawnServer("node", ["adapters/node/bin.mjs", "dev", tempRepository("simple"), "--port", "0"]);
    try {
      await server.waitFor(/control routes .* answer only requests to 127\.0\.0\.1\/localhost\/\[::1\]/);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
