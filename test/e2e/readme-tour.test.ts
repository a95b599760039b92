import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";

// README's five-minute tour, run as written: its shell blocks against `tensorfn dev` on a copy of
// the functions it uses (the tour writes into the repository), with the addresses swapped in.
// A comment line that is a JSON answer (`# {...}`), and a quoted fragment in a trailing comment
// (`# … "state":"PARKED" …`), must appear in what the block printed.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const tour = README.slice(README.indexOf("## A five-minute tour"), README.indexOf("\n## ", README.indexOf("## A five-minute tour") + 1));
const blocks = [...tour.matchAll(/```(sh|yaml)\n([\s\S]*?)```/g)].map((m) => ({ kind: m[1]!, text: m[2]! }));

// Pasted as written, each block at once: no retry, no wait (a request for a folder the watcher has
// not reported yet scans for it; the tour's curl after its cp must answer the first time).
const PRELUDE = "set -e\n";

function expectations(text: string): string[] {
  const wanted: string[] = [];
  for (const line of text.split("\n")) {
    const answer = /^#\s*(\{.*\})\s*$/.exec(line);
    if (answer) wanted.push(answer[1]!);
    const trailing = /\S.*\s#\s*(.*)$/.exec(line);
    if (trailing) for (const fragment of trailing[1]!.match(/"[^"]+":"[^"]+"/g) ?? []) wanted.push(fragment);
  }
  return wanted;
}

describe("README's five-minute tour", () => {
  let server: SpawnedServer;
  let repo: string;

  beforeAll(async () => {
    repo = tempRepository("simple", "mlp", "word_count");
    server = await spawnServer(process.execPath, ["adapters/node/bin.mjs", "dev", repo, "--port", "0"], { cwd: ROOT });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  const local = (text: string) => text.replaceAll("localhost:8000", server.url.replace(/^http:\/\//, "")).replace(/(?<![\w/])functions\//g, `${repo}/`);

  it("has the blocks this test runs", () => {
    expect(blocks.filter((b) => b.kind === "sh").length).toBeGreaterThanOrEqual(3);
    expect(blocks.some((b) => b.kind === "yaml" && /^# functions\/\S+\/function\.yaml/.test(b.text))).toBe(true);
  });

  it("runs every block in order, each printing what its comments promise", { timeout: 120_000 }, async () => {
    for (const block of blocks) {
      if (block.kind === "yaml") {
        // Written where its first line says; the tour's next steps need the reload it causes.
        const file = /^# (\S+)/.exec(block.text)![1]!;
        writeFileSync(local(file), block.text);
        const name = file.split("/")[1]!;
        await expect
          .poll(async () => (await (await fetch(`${server.url}/v2/models/${name}/config`)).json()).max_batch_size, { timeout: 30_000, interval: 200 })
          .toBe(Number(/max_batch_size:\s*(\d+)/.exec(block.text)![1]));
        continue;
      }
      const run = spawnSync("bash", ["-c", PRELUDE + local(block.text)], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
      expect(run.status, `${block.text}\n${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout, block.text).not.toContain('"error"');
      for (const wanted of expectations(block.text)) expect(run.stdout, `${block.text}\nprinted:\n${run.stdout}`).toContain(wanted);
    }
  });
});
