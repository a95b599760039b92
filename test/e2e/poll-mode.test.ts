import { afterEach, describe, expect, it } from "vitest";
import { cpSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Under Node, Bun and Deno alike: the server polls a real repository on the real clock every
// 100 ms (`--repository-poll-secs 0.1`), and the test waits, bounded, for what the index says.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const range = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));
const body = JSON.stringify({
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: range(16, (i) => i) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: range(16, () => 2) },
  ],
});
type Row = { name: string; version?: string; state: string };
const index = async (url: string) => ((await (await fetch(`${url}/v2/repository/index`, { method: "POST" })).json()) as Row[]).map((r) => `${r.name} v${r.version} ${r.state}`);

/** Puts a copy of `from` at `to` in one rename, so a poll never sees a half-copied folder. */
function placeCopy(from: string, to: string): void {
  const staging = join(mkdtempSync(join(tmpdir(), "tensorfn-staging-")), "copy");
  cpSync(from, staging, { recursive: true });
  renameSync(staging, to);
}

describe("poll mode (--model-control-mode poll --repository-poll-secs)", () => {
  it("loads a function added to the repository, serves a new version, and drops a removed function", async () => {
    const repo = tempRepository("simple");
    server = await startServer({ repository: repo, controlMode: "poll", pollIntervalMs: 100 });
    const url = server.url;
    expect(await index(url)).toEqual(["simple v1 READY"]);
    const infer = async (name: string) => {
      const res = await fetch(`${url}/v2/models/${name}/infer`, { method: "POST", body });
      return { status: res.status, body: await res.json() };
    };

    placeCopy(join(repo, "simple"), join(repo, "adder"));
    await expect.poll(() => index(url), { timeout: 20_000 }).toEqual(["adder v1 READY", "simple v1 READY"]);
    const added = await infer("adder");
    expect(added.status).toBe(200);
    expect(added.body.outputs[0].data).toEqual(range(16, (i) => i + 2));

    placeCopy(join(repo, "simple", "1"), join(repo, "simple", "2")); // the default policy serves the latest
    await expect.poll(() => index(url), { timeout: 20_000 }).toEqual(["adder v1 READY", "simple v2 READY"]);
    const changed = await infer("simple");
    expect(changed.status).toBe(200);
    expect(changed.body.model_version).toBe("2");
    expect(changed.body.outputs[1].data).toEqual(range(16, (i) => i - 2));

    rmSync(join(repo, "adder"), { recursive: true });
    await expect.poll(() => index(url), { timeout: 20_000 }).toEqual(["simple v2 READY"]);
    expect((await infer("adder")).status).toBe(404);
  });
});
