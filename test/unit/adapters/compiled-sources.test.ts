import { describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compiledSources } from "../../../adapters/node/compiled-sources.mjs";
import { createNodePlatform } from "../../../adapters/node/platform.ts";
import type { CompiledModules } from "../../../adapters/node/platform.ts";

const WORKER_SOURCE = new URL("../../../runtime/backends/onnxruntime-worker.ts", import.meta.url);

type Manifest = { dir: string; inputs: Record<string, [number, number, string]> };
const manifestOf = (cacheDir: string) => JSON.parse(readFileSync(join(cacheDir, "current.json"), "utf8")) as Manifest;

/** Starts a worker for the ORT worker module through the Node platform and waits for its first answer. */
async function answers(compiled?: CompiledModules): Promise<unknown> {
  const worker = createNodePlatform(undefined, { compiled }).startWorker!(WORKER_SOURCE);
  try {
    return await new Promise((resolve) => {
      worker.onMessage(resolve);
      worker.postMessage({ id: 7, op: "release" });
    });
  } finally {
    await worker.terminate();
  }
}

describe("Node: tensorfn's sources compiled ahead (bin.mjs)", () => {
  it("builds the CLI and the worker modules once, lists what they were built from, and uses the build while those are unchanged", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "tensorfn-compiled-"));
    try {
      const first = await compiledSources({ cacheDir });
      expect(first).toBeDefined();
      const cli = (await import(first!.cli)) as Record<string, unknown>;
      expect(typeof cli.runCli).toBe("function");
      expect(typeof cli.nodeHost).toBe("function");
      expect(Object.keys(first!.workers)).toEqual([WORKER_SOURCE.href]);
      const manifest = manifestOf(cacheDir);
      expect(Object.keys(manifest.inputs)).toEqual(expect.arrayContaining(["runtime/runtime.ts", "adapters/node/cli.ts", "runtime/backends/onnxruntime-worker.ts", "native/index.ts"]));
      // Pure JavaScript dependencies are compiled in (their files are inputs too); onnxruntime stays an import.
      expect(Object.keys(manifest.inputs).some((path) => path.startsWith("node_modules/zod/"))).toBe(true);
      expect(Object.keys(manifest.inputs).filter((path) => path.startsWith("node_modules/onnxruntime"))).toEqual([]);

      const built = statSync(fileURLToPath(first!.cli)).mtimeMs;
      expect(await compiledSources({ cacheDir })).toEqual(first);
      expect(statSync(fileURLToPath(first!.cli)).mtimeMs).toBe(built);
      expect(manifestOf(cacheDir)).toEqual(manifest);
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it("builds again when a source is not what the build read, or the build is gone", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "tensorfn-compiled-"));
    try {
      await compiledSources({ cacheDir });
      const manifest = manifestOf(cacheDir);
      const truth = manifest.inputs["runtime/runtime.ts"]!;
      manifest.inputs["runtime/runtime.ts"] = [truth[0] + 1, truth[1], "0".repeat(64)];
      writeFileSync(join(cacheDir, "current.json"), JSON.stringify(manifest));
      expect(await compiledSources({ cacheDir })).toBeDefined();
      expect(manifestOf(cacheDir).inputs["runtime/runtime.ts"]).toEqual(truth);
      // And when the manifest names a directory outside the cache, even one that holds a cli.mjs.
      const outside = mkdtempSync(join(tmpdir(), "tensorfn-outside-"));
      writeFileSync(join(outside, "cli.mjs"), "");
      writeFileSync(join(cacheDir, "current.json"), JSON.stringify({ ...manifestOf(cacheDir), dir: relative(cacheDir, outside) }));
      expect((await compiledSources({ cacheDir }))!.cli.startsWith(pathToFileURL(cacheDir).href + "/")).toBe(true);
      expect(manifestOf(cacheDir).dir).toMatch(/^[0-9a-f]{16}$/);
      rmSync(outside, { recursive: true, force: true });
      // And when its build directory is gone.
      rmSync(join(cacheDir, manifestOf(cacheDir).dir), { recursive: true });
      const again = await compiledSources({ cacheDir });
      expect(statSync(fileURLToPath(again!.cli)).isFile()).toBe(true);
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it("gives nothing where the cache cannot be written (bin.mjs then loads the sources through the hooks)", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "tensorfn-compiled-")), "a-file");
    writeFileSync(file, "");
    expect(await compiledSources({ cacheDir: join(file, "cache") })).toBeUndefined();
  });

  it("a worker thread runs the compiled module, without TypeScript loading, and the source where the compiled one is gone", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "tensorfn-compiled-"));
    try {
      const compiled = (await compiledSources({ cacheDir }))!;
      expect(await answers(compiled)).toEqual({ id: 7, ok: true });
      // A stand-in for the compiled module says whether that thread can import TypeScript.
      const probe = join(cacheDir, "probe.mjs");
      writeFileSync(probe, `
        let typescript = true;
        try { await import(${JSON.stringify(new URL("../../../runtime/core/clock.ts", import.meta.url).href)}); } catch { typescript = false; }
        self.addEventListener("message", ({ data }) => self.postMessage({ id: data.id, typescript }));`);
      expect(await answers({ ...compiled, workers: { [WORKER_SOURCE.href]: pathToFileURL(probe).href } })).toEqual({ id: 7, typescript: false });
      rmSync(join(cacheDir, manifestOf(cacheDir).dir), { recursive: true });
      expect(await answers(compiled)).toEqual({ id: 7, ok: true });
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it("the compiled code keeps each source's own import.meta.url (paths beside a source resolve as uncompiled)", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "tensorfn-compiled-"));
    try {
      const compiled = (await compiledSources({ cacheDir }))!;
      const dir = join(cacheDir, manifestOf(cacheDir).dir);
      const code = ["cli.mjs", ...readdirSync(dir).filter((f) => f.startsWith("chunk-") && f.endsWith(".mjs"))].map((f) => readFileSync(join(dir, f), "utf8")).join("\n");
      // Only the modules' own require (for CommonJS compiled in) is made from the bundle's URL.
      expect(code.split("\n").filter((line) => line.includes("import.meta.url") && !line.includes("__tensorfnRequire("))).toEqual([]);
      expect(code).toContain(JSON.stringify(pathToFileURL(fileURLToPath(new URL("../../../runtime/backends/onnxruntime-node-backend.ts", import.meta.url))).href));
      expect(compiled.native).toMatch(/native\.mjs$/);
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});
