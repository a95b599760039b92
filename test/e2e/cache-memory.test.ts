import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";

// The response cache under answers that are cheap to send and costly to keep as objects: BYTES
// tensors of 2 M empty strings (8 MB on the wire each). The server runs in its own process, under
// the runtime TENSORFN_RUNTIME names, so its RSS is its own.

let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const ELEMENTS = 2_000_000;

/** A binary request of ELEMENTS strings, all empty but the first (4 bytes telling `i`): each one distinct. */
function manyStrings(i: number): { body: Buffer; headers: Record<string, string> } {
  const header = Buffer.from(
    JSON.stringify({
      inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [ELEMENTS], parameters: { binary_data_size: ELEMENTS * 4 + 4 } }],
      outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }],
    }),
  );
  const data = Buffer.alloc(ELEMENTS * 4 + 4);
  data.writeUInt32LE(4, 0);
  data.writeUInt32LE(i, 4);
  return { body: Buffer.concat([header, data]), headers: { "inference-header-content-length": String(header.length), "content-type": "application/octet-stream" } };
}

function rssMiB(pid: number): number {
  return (Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * 4096) / 2 ** 20;
}

describe(`the response cache's memory (${TARGET_RUNTIME})`, () => {
  it("holds BYTES answers at what they cost: 12 distinct answers of 2 M strings keep RSS within a small multiple of --cache-size", async () => {
    const repo = tempRepository();
    mkdirSync(join(repo, "strings", "1"), { recursive: true });
    writeFileSync(
      join(repo, "strings", "function.yaml"),
      "backend: identity\nmax_batch_size: 0\nresponse_cache: { enable: true }\ninput: [{ name: INPUT0, data_type: TYPE_STRING, dims: [-1] }]\noutput: [{ name: OUTPUT0, data_type: TYPE_STRING, dims: [-1] }]\n",
    );
    const command = cliEntry(TARGET_RUNTIME, ["serve", "--repo", repo, "--port", "0", "--cache-size", "32M"]);
    server = await spawnServer(command[0], command[1], { timeoutMs: 90_000 });
    const pid = server.child.pid!;
    const infer = async (i: number) => {
      const { body, headers } = manyStrings(i);
      const response = await request(`${server!.url}/v2/models/strings/infer`, { method: "POST", body, headers });
      const bytes = await response.body.arrayBuffer();
      return { status: response.statusCode, bytes: bytes.byteLength };
    };
    expect(await infer(0)).toMatchObject({ status: 200 });
    const before = rssMiB(pid);
    let peak = before;
    for (let i = 1; i <= 12; i++) {
      expect(await infer(i)).toMatchObject({ status: 200 });
      peak = Math.max(peak, rssMiB(pid));
    }
    const figures = await (await fetch(`${server.url}/metrics`)).text();
    const held = Number(/^tensorfn_cache_bytes (\d+)$/m.exec(figures)?.[1]);
    expect(held).toBeGreaterThan(16 << 20); // it did keep answers...
    expect(held).toBeLessThanOrEqual(32 << 20); // ...within its size
    // Before packing, each kept answer held 2 M objects (~200 MB): RSS climbed past 2 GB.
    expect(peak - before, `RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MiB`).toBeLessThan(500);
    expect(await infer(3)).toMatchObject({ status: 200 });
  });
});
