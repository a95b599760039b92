import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { apiGroup, ROUTES } from "../../../runtime/http/routes.ts";
import type { RouteHandlers, RouteRequest } from "../../../runtime/http/routes.ts";
import { createRouter } from "../../../runtime/http/router.ts";
import type { AppContext } from "../../../runtime/http/route-handlers.ts";
import type { DirectBody } from "../../../runtime/call/direct-body.ts";
import type { Reply } from "../../../runtime/call/reply.ts";

// Routing alone: every route's handler answers its id and parameters, so what is checked is which
// row a request reaches, and what the router answers itself (404, 405, HEAD, CORS). The routes'
// own answers are test/e2e's (router.test.ts compares Node's listener with the web fetch path).
const handlers = Object.fromEntries(
  ROUTES.map((r) => [r.id, (q: RouteRequest) => ({ status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ id: r.id, params: q.params }) })]),
) as unknown as RouteHandlers;

function router(corsOrigins?: string[]) {
  const models = { redact: (text: string) => text } as unknown as AppContext["models"];
  return createRouter({ models, corsOrigins, log: { error() {} } } as unknown as AppContext, handlers);
}

const body: DirectBody = { signal: new AbortController().signal, read: async () => new Uint8Array() };
const request = (method: string, url: string, headers: Record<string, string> = {}) => ({ method, url, header: (name: string) => headers[name], body });
const json = (reply: Reply) => JSON.parse(reply.body as string) as { id: string; params: Record<string, string>; error?: string };

describe("the router", () => {
  it.each([
    ["POST", "/v2/models/simple/infer", "infer", { name: "simple" }],
    ["POST", "/v2/models/simple/versions/3/infer", "infer", { name: "simple", version: "3" }],
    ["POST", "/v2/models/a.b-c_d/infer?x=1", "infer", { name: "a.b-c_d" }],
    ["POST", "/v2/models/sim%70le/infer", "infer", { name: "simple" }],
    ["POST", "/v2/models/..%2F..%2Fetc/infer", "infer", { name: "../../etc" }], // decoded, then refused by the lookup as any other unknown name
    ["POST", "/v2/models/%zz/infer", "infer", { name: "%zz" }], // not decodable: kept as sent
    ["GET", "/v2/health/ready", "health", { probe: "ready" }],
    ["GET", "/v2/models/stats", "stats", {}],
    ["GET", "/v2/models/simple/versions/1/config", "model-config", { name: "simple", version: "1" }],
    ["POST", "/v1/functions/word_count", "function-call", { name: "word_count" }],
    ["POST", "/v1/chat/completions", "openai-chat", {}],
    ["POST", "/v2/models/tiny_gpt/versions/1/generate_stream", "generate-stream", { name: "tiny_gpt", version: "1" }],
    ["GET", "http://127.0.0.1:8000/v2/models/simple?x=1", "model-metadata", { name: "simple" }], // an absolute target (RFC 9112)
    ["GET", "/metrics", "metrics", {}],
  ])("answers %s %s from its row", async (method, url, id, params) => {
    expect(json(await router()(request(method, url)))).toEqual({ id, params });
  });

  it.each([
    ["GET", "/v2/nothing", 404],
    ["POST", "/v2/models/simple/infer/", 404],
    ["POST", "/v2/models/simple/versions/x/infer", 404],
    ["POST", "/v1/chat/completions/x", 404],
    ["GET", "/v2/models/simple/infer", 405],
    ["GET", "/v1/chat/completions", 405],
    ["OPTIONS", "/v2/models/simple/infer", 405],
    ["GET", "*", 404], // an asterisk target is no path
    ["GET", "v2/models/simple", 404],
  ])("answers %s %s with %i", async (method, url, status) => {
    const reply = await router()(request(method, url));
    expect([reply.status, json(reply).error]).toEqual([status, status === 404 ? "Not Found" : "Method Not Allowed"]);
    if (status === 405) expect(reply.headers.allow).toBe("POST");
  });

  it("names every method a path takes in a 405's Allow", async () => {
    const reply = await router()(request("PUT", "/v2/repository/models/simple/rollout", { host: "127.0.0.1" }));
    expect([reply.status, reply.headers.allow]).toEqual([405, "GET, POST"]);
  });

  it("refuses an unknown path under a control prefix as the control route it would be, before its 404", async () => {
    expect((await router()(request("POST", "/v2/repository/unknown", { host: "evil.example" }))).status).toBe(403);
    expect((await router()(request("POST", "/v2/repository/unknown", { host: "127.0.0.1" }))).status).toBe(404);
  });

  it("answers HEAD as its GET (the server sends its length, not its body); a stream is stopped", async () => {
    const reply = await router()(request("HEAD", "/v2/health/ready"));
    expect([reply.status, reply.headers["content-type"], json(reply).id]).toEqual([200, "application/json", "health"]);
    let cancelled = false;
    const events = createRouter({ models: { redact: (t: string) => t }, log: { error() {} } } as unknown as AppContext, {
      "dashboard-events": () => ({ status: 200, headers: { "content-type": "text/event-stream" }, body: new ReadableStream({ cancel: () => void (cancelled = true) }) }),
    });
    const head = await events(request("HEAD", "/v2/dashboard/events", { host: "127.0.0.1" }));
    expect([head.status, head.body, cancelled]).toEqual([200, "", true]);
  });

  it("every row it reaches belongs to the group its path has (access is decided on the row's group, matched once)", () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9_.%-]{1,12}$/);
    const url = fc.oneof(
      fc.tuple(segment, fc.option(fc.stringMatching(/^[0-9a-z]{1,3}$/)), fc.constantFrom("/infer", "/ready", "/config", "/stats", "/generate", ""), fc.constantFrom("", "?x=1", "/")).map(([n, v, s, q]) => `/v2/models/${n}${v === null ? "" : `/versions/${v}`}${s}${q}`),
      fc.tuple(segment, fc.constantFrom("", "?x=1", "/")).map(([n, q]) => `/v1/functions/${n}${q}`),
      fc.tuple(segment, fc.constantFrom("load", "unload", "park", "rollout")).map(([n, a]) => `/v2/repository/models/${n}/${a}`),
    );
    const groups = new Map<string, string>(ROUTES.map((r) => [r.id, r.group]));
    return fc.assert(
      fc.asyncProperty(url, fc.constantFrom("GET", "POST"), async (u, method) => {
        const reply = await router()(request(method, u, { host: "127.0.0.1" }));
        if (reply.status !== 200) return;
        expect(groups.get(json(reply).id)).toBe(apiGroup(u.split("?", 1)[0]!));
      }),
      { numRuns: 500 },
    );
  });
});

describe("the router under --cors-origin", () => {
  const origin = "https://app.example";

  it("answers a preflight 204 with what a browser may send, before access control", async () => {
    const reply = await router([origin])(request("OPTIONS", "/v2/models/simple/infer", { origin, "access-control-request-method": "POST" }));
    expect(reply.status).toBe(204);
    expect(reply.headers).toMatchObject({ "access-control-allow-origin": origin, "access-control-max-age": "600", "access-control-allow-methods": "GET,POST,OPTIONS", vary: "Origin" });
    expect(reply.headers["access-control-allow-headers"]).toContain("Inference-Header-Content-Length");
  });

  it("marks an allowed origin's answers, keeps another's unmarked, and adds Origin to a Vary already there", async () => {
    const ok = await router([origin])(request("POST", "/v2/models/simple/infer", { origin }));
    expect(ok.headers).toMatchObject({ "access-control-allow-origin": origin, vary: "Origin" });
    expect(ok.headers["access-control-expose-headers"]).toContain("Inference-Header-Content-Length");
    const other = await router([origin])(request("POST", "/v2/models/simple/infer", { origin: "http://evil.example" }));
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    const compressed = await router([origin])(request("POST", "/v2/models/simple/infer", { origin, "accept-encoding": "gzip" }));
    expect([compressed.headers["content-encoding"], compressed.headers.vary]).toEqual(["gzip", "Accept-Encoding, Origin"]);
    const any = await router(["*"])(request("GET", "/v2/nothing", { origin: "http://any.example" }));
    expect([any.status, any.headers["access-control-allow-origin"], any.headers.vary]).toEqual([404, "*", undefined]);
  });

  it("adds no CORS header when --cors-origin is not set", async () => {
    const reply = await router()(request("POST", "/v2/models/simple/infer", { origin }));
    expect(Object.keys(reply.headers).filter((h) => h.startsWith("access-control-"))).toEqual([]);
  });
});
