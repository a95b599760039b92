import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// What answers say about files and failures: never an absolute path, never a function's name or
// reason to a client without a key (once keys are set), never an error of unbounded size.

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const API_KEY = "api-key-for-error-paths";

/** `simple`, a function whose function.yaml is broken, and a handler that cannot be imported. */
function repository(): string {
  const repo = tempRepository("simple");
  mkdirSync(join(repo, "typo", "1"), { recursive: true });
  writeFileSync(join(repo, "typo", "function.yaml"), "max_batch_size: 8\ninput: [\n");
  mkdirSync(join(repo, "broken", "1"), { recursive: true });
  writeFileSync(join(repo, "broken", "function.yaml"), "backend: handler\nhandler: handler.ts\nmax_batch_size: 0\n");
  writeFileSync(join(repo, "broken", "handler.ts"), 'import x from "./missing.ts";\nexport function execute(r: unknown[]) { return r.map(() => x); }\n');
  return repo;
}

async function get(path: string, init: { method?: string; body?: string; key?: string } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  const response = await fetch(`${server!.url}${path}`, { method: init.method ?? "GET", body: init.body, headers });
  return { status: response.status, text: await response.text() };
}

describe("errors and readiness name no absolute path", () => {
  it("a broken function.yaml and a handler that cannot be imported are named relative to the repository, in every answer", async () => {
    const repo = repository();
    const roots = [repo, realpathSync(repo)];
    // Control mode none: server readiness waits for every function (in lazy mode it waits for none).
    server = await startServer({ repository: repo, controlMode: "none" });
    const answers = [
      await get("/v2/health/ready"),
      await get("/v2/models/typo/ready"),
      await get("/v2/models/typo"),
      await get("/v2/models/typo/infer", { method: "POST", body: "{}" }),
      await get("/v1/functions/broken", { method: "POST", body: "{}" }),
      await get("/v2/repository/index", { method: "POST" }),
    ];
    expect(answers.map((a) => a.status)).toEqual([503, 503, 503, 503, 503, 200]);
    for (const answer of answers) for (const root of roots) expect(answer.text).not.toContain(root);
    expect(answers[0]!.text).toBe('{"error":"Server not ready: 2 functions the control mode loads are not ready; see POST /v2/repository/index"}');
    expect(answers[1]!.text).toContain("typo/function.yaml:3: invalid YAML");
    // Found when the load compiles the handler, before any of it runs.
    expect(answers[4]!.text).toMatch(/function 'broken': handler does not compile: broken\/handler\.ts:1:\d+: Could not resolve \\?"\.\/missing\.ts/);
    expect(answers[4]!.text).not.toMatch(/namespace=/);
  });

  it("with API keys, server readiness stays open without naming functions; a model's readiness and reason need a key", async () => {
    server = await startServer({ repository: repository(), apiKeys: [API_KEY], controlMode: "none" });
    const open = await get("/v2/health/ready");
    expect(open.status).toBe(503);
    expect(open.text).not.toMatch(/typo|broken/);
    expect((await get("/v2/health/live")).status).toBe(200);
    expect((await get("/v2/models/typo/ready")).status).toBe(401);
    const keyed = await get("/v2/models/typo/ready", { key: API_KEY });
    expect(keyed.status).toBe(503);
    expect(keyed.text).toContain("typo/function.yaml:3");
  });

  it("a load with 200 000 unknown fields is refused quickly with an answer of bounded size", async () => {
    server = await startServer({ repository: repository(), controlMode: "explicit" });
    const config = JSON.stringify(Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`field_${i}`, 1])));
    const started = performance.now();
    const tooLong = await get("/v2/repository/models/simple/load", { method: "POST", body: JSON.stringify({ parameters: { config } }) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toMatch(/parameters\.config has \d+ characters; a configuration may have at most 262144/);
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 15_000 }, (_, i) => [`f${i}`, 1])));
    const refused = await get("/v2/repository/models/simple/load", { method: "POST", body: JSON.stringify({ parameters: { config: many } }) });
    expect(refused.status).toBe(400);
    expect(refused.text.length).toBeLessThan(12_000);
    expect(refused.text).toMatch(/and 14980 more problem\(s\) not listed/);
    expect(performance.now() - started).toBeLessThan(5000); // 200 000 fields took 11.4 s and answered 56 MB
  });
});

describe("numbers past 2^53", () => {
  it("are not echoed rounded: an error describes them instead of quoting digits the client never sent", async () => {
    server = await startServer({ repository: tempRepository("simple", "tiny_gpt") });
    const ones = Array(16).fill(1);
    const sent = "9007199254740993";
    const cases = [
      [`/v2/models/simple/infer`, `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,${sent}],"data":[1]},{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":${JSON.stringify(ones)}}]}`, /shape dimension 1 is a number past 2\^53/],
      [`/v2/models/simple/infer`, `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":[${sent},1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]},{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":${JSON.stringify(ones)}}]}`, /element 0 is a number past 2\^53/],
      [`/v2/models/simple/infer`, `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":${JSON.stringify(ones)}},{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":${JSON.stringify(ones)}}],"outputs":[{"name":"OUTPUT0","parameters":{"classification":${sent}}}]}`, /got a number past 2\^53/],
      [`/v1/completions`, `{"model":"tiny_gpt","prompt":"hi","max_tokens":${sent}}`, /max_tokens: must be an integer from 1 to \d+, not a number past 2\^53/],
    ] as const;
    for (const [path, body, message] of cases) {
      const { status, text } = await get(path, { method: "POST", body });
      expect(status, body).toBe(400);
      expect(text).toMatch(message);
      expect(text).not.toContain("9007199254740992");
    }
  });
});
