import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import { mlpReference } from "../../models/mlp.ts";

// The same CLI and runtime, started under each runtime's own entry point (binaries from npm).
const runtimes: [string, string, string[]][] = [
  ["bun", "node_modules/.bin/bun", ["adapters/bun/main.ts"]],
  ["deno", "node_modules/.bin/deno", ["run", "-A", "--unstable-no-legacy-abort", "adapters/deno/main.ts"]],
];

describe.each(runtimes)("under %s", (_name, command, entry) => {
  it("serves the simple function and runs one inference", async () => {
    const server = await spawnServer(command, [...entry, "serve", "--repo", tempRepository("simple"), "--port", "0"], { timeoutMs: 90000 });
    try {
      const res = await fetch(`${server.url}/v2/models/simple/infer`, {
        method: "POST",
        body: JSON.stringify({
          inputs: ["INPUT0", "INPUT1"].map((name, k) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i * (k + 1)) })),
        }),
      });
      expect(res.status).toBe(200);
      expect((await res.json()).outputs[0].data).toEqual(Array.from({ length: 16 }, (_, i) => 3 * i));
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 120000);
});

describe("under deno, WebGPU", () => {
  // Deno ships WebGPU; on a machine without a GPU it finds Mesa's software adapter (llvmpipe).
  it("serves `accelerator: webgpu` through onnxruntime-web's WebGPU provider, agreeing with the reference", async () => {
    const repo = tempRepository("mlp");
    writeFileSync(join(repo, "mlp", "function.yaml"), "accelerator: webgpu\n");
    const server = await spawnServer("node_modules/.bin/deno", ["run", "-A", "--unstable-no-legacy-abort", "adapters/deno/main.ts", "serve", "--repo", repo, "--port", "0"], {
      timeoutMs: 90000,
    });
    try {
      const { parameters } = await (await fetch(`${server.url}/v2/models/mlp/config`)).json();
      expect(parameters.execution_provider.string_value).toBe("webgpu");
      const x = Array.from({ length: 512 }, (_, i) => Math.cos(i));
      const res = await fetch(`${server.url}/v2/models/mlp/infer`, {
        method: "POST",
        body: JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: x }] }),
      });
      const expected = mlpReference(Float32Array.from(x), 1);
      const { data } = (await res.json()).outputs[0];
      expect(data).toHaveLength(10);
      data.forEach((v: number, i: number) => expect(Math.abs(v - expected[i]!)).toBeLessThan(1e-4));
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 120000);
});
