import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "undici";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

const API_KEY = "api-7f3c9e2b1d";
const ADMIN_KEY = "admin-91ab44e0c7";
const simpleBody = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) });

describe("bearer keys guard API groups (--api-key-file, --admin-key-file)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ repository: tempRepository("simple"), apiKeys: [API_KEY, "second-api-key"], adminKeys: [ADMIN_KEY], dashboard: true });
  }, 90_000);
  afterAll(async () => await server?.close());

  const call = async (path: string, init: { method?: string; key?: string; authorization?: string; body?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.key) headers.authorization = `Bearer ${init.key}`;
    if (init.authorization) headers.authorization = init.authorization;
    const res = await request(`${server.url}${path}`, { method: (init.method ?? "GET") as "GET", headers, body: init.body });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
  };

  it("keeps server health and /metrics open for probes and scrapers; a model's readiness (it names its reason) needs a key", async () => {
    expect((await call("/v2/health/live")).status).toBe(200);
    expect((await call("/v2/health/ready")).status).toBe(200);
    expect((await call("/metrics")).status).toBe(200);
    expect((await call("/v2/models/simple/ready")).status).toBe(401);
    expect([200, 503]).toContain((await call("/v2/models/simple/ready", { key: API_KEY })).status);
  });

  it("answers 401 with WWW-Authenticate: Bearer and a JSON error without a key, or with a wrong one", async () => {
    for (const attempt of [{}, { key: "not-a-key" }, { authorization: `Basic ${btoa("u:p")}` }, { key: API_KEY.slice(0, -1) }]) {
      const res = await call("/v2/models/simple/infer", { method: "POST", body: simpleBody, ...attempt });
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(res.json().error).toMatch(/POST \/v2\/models\/simple\/infer/);
      expect(res.text).not.toContain("not-a-key");
    }
    expect((await call("/v2")).status).toBe(401);
    expect((await call("/v2/models/simple")).status).toBe(401);
    expect((await call("/v2/models/stats")).status).toBe(401);
  });

  it("serves metadata, inference and statistics with either API key, and with the admin key", async () => {
    for (const key of [API_KEY, "second-api-key", ADMIN_KEY]) {
      expect((await call("/v2", { key })).status).toBe(200);
      const res = await call("/v2/models/simple/infer", { method: "POST", body: simpleBody, key });
      expect(res.status).toBe(200);
      expect(res.json().outputs[0].data[0]).toBe(2);
      expect((await call("/v2/models/simple/stats", { key })).status).toBe(200);
    }
  });

  it("keeps the repository API, trace and dashboard data for the admin key: an API key gets 403", async () => {
    for (const [method, path] of [["POST", "/v2/repository/index"], ["POST", "/v2/repository/models/simple/park"], ["GET", "/v2/trace?seconds=1"], ["GET", "/v2/dashboard/snapshot"]] as const) {
      expect((await call(path, { method })).status, path).toBe(401);
      expect((await call(path, { method, key: "wrong" })).status, path).toBe(401);
      const denied = await call(path, { method, key: API_KEY });
      expect(denied.status, path).toBe(403);
      expect(denied.json().error).toMatch(/admin key/);
      expect((await call(path, { method, key: ADMIN_KEY })).status, path).toBe(200);
    }
  });

  it("lets an admin key through from any Host, with any body type (the key proves intent)", async () => {
    const res = await call("/v2/repository/index", { method: "POST", key: ADMIN_KEY, body: "{}", headers: { host: `evil.example:80`, "content-type": "text/plain" } });
    expect(res.status).toBe(200);
  });

  it("serves the dashboard page without a key (a browser cannot send one when it navigates); its data needs one", async () => {
    const page = await call("/");
    expect(page.status).toBe(200);
    expect(page.text).toContain("tensorfn dev server");
    expect((await call("/dashboard.js")).status).toBe(200);
    expect((await call("/v2/dashboard/events")).status).toBe(401);
  });
});
