import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// bench/suites/gpu-check.sh as the GPU host runs it, on the adapter this machine has (llvmpipe): packed
// here, then run with no Node on PATH and no node_modules, from its own bundle.
describe("bench/suites/gpu-check.sh", () => {
  it("its program type-checks under Deno (tsc leaves it out: it uses Deno's globals)", () => {
    const check = spawnSync("node_modules/.bin/deno", ["check", "--no-config", "--node-modules-dir=manual", "bench/suites/gpu-check/main.ts"], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    expect(check.status, check.stderr).toBe(0);
  }, 120_000);

  it("packs under 64 MiB and, run the host's way, serves on WebGPU with outputs that agree with WASM", () => {
    const out = mkdtempSync(join(tmpdir(), "gpu-check-out-"));
    const bundle = mkdtempSync(join(tmpdir(), "gpu-check-bundle-"));
    const run = spawnSync("bash", ["bench/suites/gpu-check.sh", "selftest"], {
      encoding: "utf8",
      env: { ...process.env, OUT: out, GPU_CHECK_BUNDLE: bundle, GPU_CHECK_XZ_LEVEL: "0", GPU_CHECK_MODELS: "mlp", GPU_CHECK_SECONDS: "0.5" },
      timeout: 170_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output).toBe(0);
    expect(output).toMatch(/gpu-check: packed .*: \d+ MiB/);
    expect(Number(/packed .*: (\d+) MiB/.exec(output)![1])).toBeLessThanOrEqual(60);
    expect(output).toMatch(/^gpu-check: ok on /m);
    const report = JSON.parse(readFileSync(join(out, "gpu-check.json"), "utf8"));
    expect(report.adapter.found).toBe(true);
    expect(report.served.mlp.provider).toBe("webgpu");
    expect(report.served.mlp.steps.map((s: { concurrency: number; errors: number }) => [s.concurrency, s.errors])).toEqual([[1, 0], [32, 0]]);
    for (const row of report.raw.mlp) expect(row.relative).toBeLessThan(1e-3);
    // The carried addon loads in the bundle and reads NVML: here, where there is no driver, it says so.
    expect(report.nvml.problem).toMatch(/^no NVIDIA driver: libnvidia-ml\.so\.1/);
    expect(report.cuda.libraries).toBeInstanceOf(Array);
  }, 180_000);
});
