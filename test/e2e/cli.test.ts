import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnServer, tempRepository } from "../support/spawn-server.ts";

const BIN = "adapters/node/bin.mjs";

describe("tensorfn check", () => {
  it("passes the bundled example repository", () => {
    const run = spawnSync("node", [BIN, "check", "functions"], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });

  it("prints file:line: field: problem for each error and exits 1", () => {
    const repo = tempRepository();
    mkdirSync(join(repo, "broken", "1"), { recursive: true });
    writeFileSync(join(repo, "broken", "1", "model.onnx"), "");
    writeFileSync(join(repo, "broken", "function.yaml"), "max_batch_size: 8\nmax_batch_sise: 4\ninput:\n  - { name: x, data_type: TYPE_FLOAT, dims: [4] }\n");
    const run = spawnSync("node", [BIN, "check", repo], { encoding: "utf8" });
    expect(run.status).toBe(1);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toContainEqual(expect.stringMatching(/broken\/function\.yaml:2: max_batch_sise: .*max_batch_size/));
    expect(lines).toContainEqual(expect.stringMatching(/broken\/function\.yaml:4: input\[0\]\.data_type: .*TYPE_FP32/));
  });
});

describe("tensorfn serve", () => {
  it("prints its URL once ready, serves, and exits cleanly on SIGTERM", async () => {
    const server = await spawnServer("node", [BIN, "serve", "--repo", tempRepository("simple"), "--port", "0"]);
    const ready = await fetch(`${server.url}/v2/health/ready`);
    expect(ready.status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  it("`npm start -- --port N` serves the bundled functions (the README's quick start)", async () => {
    const server = await spawnServer("npm", ["start", "--", "--port", "0"]);
    const res = await fetch(`${server.url}/v2/models/ocr_cls/ready`);
    expect(res.status).toBe(200);
    await server.stop();
  });

  it("serves /metrics on its own port with --metrics-port", async () => {
    const server = await spawnServer("node", [BIN, "serve", "--repo", tempRepository("simple"), "--port", "0", "--metrics-port", "0"]);
    try {
      await server.waitFor(/tensorfn metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/);
      const url = /tensorfn metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(server.output())![1]!;
      expect(url).not.toBe(server.url);
      expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^# TYPE nv_inference_count counter$/m);
      expect((await fetch(`${url}/v2/health/live`)).status).toBe(404);
    } finally {
      await server.stop();
    }
  });

  it("refuses malformed rate-limiter flags, naming the flag", () => {
    const cases: [string[], RegExp][] = [
      [["--rate-limit", "on"], /--rate-limit 'on' is not one of off, execution_count/],
      [["--rate-limit", "execution_count", "--rate-limit-resource", "R:many"], /--rate-limit-resource 'R:many' is not <name>:<count>\[:<device>\]/],
      [["--rate-limit-resource", "R:1"], /--rate-limit-resource needs --rate-limit execution_count/],
    ];
    for (const [flags, message] of cases) {
      const run = spawnSync("node", [BIN, "serve", "--repo", "functions", "--port", "0", ...flags], { encoding: "utf8" });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });

  it("refuses a repository that does not exist", () => {
    const run = spawnSync("node", [BIN, "serve", "--repo", "/nonexistent/repo"], { encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--repo/);
  });
});

describe("tensorfn dev", () => {
  it("prints the URLs, serves lazily, and reloads a function when its function.yaml changes", async () => {
    const repo = tempRepository("simple");
    const server = await spawnServer("node", [BIN, "dev", repo, "--port", "0"]);
    try {
      await server.waitFor(/v2\/models\/simple /);
      const config = async () => (await (await fetch(`${server.url}/v2/models/simple/config`)).json()).max_batch_size;
      expect(await config()).toBe(8);
      const yaml = join(repo, "simple", "function.yaml");
      writeFileSync(yaml, readFileSync(yaml, "utf8").replace("max_batch_size: 8", "max_batch_size: 4"));
      await server.waitFor(/simple v1: reloaded/);
      expect(server.output()).toMatch(/simple: changed; reloading/);
      expect(await config()).toBe(4);
    } finally {
      await server.stop();
    }
  });
});
