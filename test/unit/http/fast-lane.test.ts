import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { apiGroup } from "../../../runtime/http/routes.ts";
import { createFastLane } from "../../../runtime/http/fast-lane.ts";
import type { AppContext } from "../../../runtime/http/create-app.ts";
import type { DirectBody } from "../../../runtime/call/direct-body.ts";

// Which requests the lane takes (a promise) and which it leaves to the app (undefined). Routing
// only: the answers themselves are compared with the app's in test/e2e/fast-lane.test.ts.
function lane(corsOrigins?: string[]) {
  const models = { unready: () => [] } as unknown as AppContext["models"];
  const ctx = { models, corsOrigins, log: { error() {} }, maxInputBytes: 1024 } as unknown as AppContext;
  return createFastLane(ctx);
}

const body: DirectBody = { signal: new AbortController().signal, read: async () => new Uint8Array() };
const request = (method: string, url: string, headers: Record<string, string> = {}) => ({ method, url, header: (name: string) => headers[name], body });

describe("the fast lane's routes", () => {
  it.each([
    ["POST", "/v2/models/simple/infer"],
    ["POST", "/v2/models/simple/versions/3/infer"],
    ["POST", "/v2/models/a.b-c_d/infer?x=1"],
    ["GET", "/v2/health/ready"],
    ["GET", "/v2/health/live"],
    ["POST", "/v1/functions/word_count"],
    ["POST", "/v1/chat/completions"],
    ["POST", "/v1/completions"],
    ["POST", "/v1/embeddings"],
    ["POST", "/v2/models/tiny_gpt/generate"],
    ["POST", "/v2/models/tiny_gpt/versions/1/generate_stream"],
    ["GET", "/v2"],
    ["GET", "/v2/models/simple"],
    ["GET", "/v2/models/simple/ready"],
    ["GET", "/v2/models/simple/versions/1/config"],
    ["GET", "/v2/models/stats"],
    ["POST", "/v2/repository/index"],
    ["POST", "/v2/repository/models/simple/load"],
    ["GET", "/metrics"],
    ["GET", "/v1/functions"],
    ["GET", "/v1/models"],
  ])("takes %s %s", (method, url) => {
    const answer = lane()(request(method, url));
    expect(answer).toBeInstanceOf(Promise);
    void answer?.catch(() => {});
  });

  it.each([
    ["GET", "/v2/models/simple/infer"],
    ["HEAD", "/v2/health/ready"],
    ["OPTIONS", "/v2/models/simple/infer"],
    ["POST", "/v2/repository/unknown"],
    ["GET", "/v2/nothing"],
    ["POST", "/v2/models/sim%70le/infer"],
    ["POST", "/v2/models/simple/versions/x/infer"],
    ["POST", "/v2/models/simple/infer/"],
    ["GET", "/v2/health/ready/"],
    ["POST", "/v1/functions/word_count/x"],
    ["GET", "/v1/functions/word_count"],
    ["GET", "/v1/chat/completions"],
    ["POST", "/v1/chat/completions/x"],
  ])("leaves %s %s to the app", (method, url) => {
    expect(lane()(request(method, url))).toBeUndefined();
  });

  it("takes only POSTs of the inference group (it authorizes them as such without matching the group again)", () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9_.%/-]{1,12}$/);
    const url = fc.oneof(
      fc.tuple(segment, fc.option(fc.stringMatching(/^[0-9a-z]{1,3}$/)), fc.constantFrom("", "?x=1", "/")).map(([n, v, q]) => `/v2/models/${n}${v === null ? "" : `/versions/${v}`}/infer${q}`),
      fc.tuple(segment, fc.constantFrom("", "?x=1", "/")).map(([n, q]) => `/v1/functions/${n}${q}`),
    );
    fc.assert(
      fc.property(url, (u) => {
        const answer = lane()(request("POST", u));
        if (!answer) return;
        void answer.catch(() => {});
        expect(apiGroup(u.split("?", 1)[0]!)).toBe("inference");
      }),
      { numRuns: 500 },
    );
  });

  it("leaves requests with an Origin to the app when --cors-origin is set (its middleware adds the headers)", () => {
    expect(lane(["https://app.example"])(request("POST", "/v2/models/simple/infer", { origin: "https://app.example" }))).toBeUndefined();
    expect(lane(["https://app.example"])(request("GET", "/v2/health/ready"))).toBeInstanceOf(Promise);
    expect(lane()(request("GET", "/v2/health/ready", { origin: "https://app.example" }))).toBeInstanceOf(Promise);
  });
});
