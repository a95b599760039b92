import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { cliEntry, TARGET_RUNTIME } from "../../harness/start-server.ts";
import { buildFakeNvml } from "../support/fake-nvml.ts";
import { requireTool } from "../support/require-tool.ts";
import { spawnSync } from "node:child_process";

// GPU telemetry end to end without a GPU: the server, under the runtime TENSORFN_RUNTIME names,
// loads test/support/fake-nvml.c as libnvidia-ml.so.1 (through LD_LIBRARY_PATH, as it would the
// driver's) with the native addon, and serves Triton's GPU families from it.

const H100 = "GPU-11111111-2222-3333-4444-555555555555";
const A100 = "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
const MIG1 = "MIG-aaaaaaaa-0000-0000-0000-000000000001";
const MIG3 = "MIG-aaaaaaaa-0000-0000-0000-000000000003";
const GiB = 2 ** 30;

function start(env: Record<string, string>): Promise<SpawnedServer> {
  const [command, args] = cliEntry(TARGET_RUNTIME, ["serve", "--repo", tempRepository("simple"), "--port", "0", "--metrics-interval-ms", "200"]);
  return spawnServer(command, args, { timeoutMs: 90_000, env });
}

/** Every sample of `family` by its gpu_uuid. */
function byGpu(text: string, family: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${family}\\{gpu_uuid="([^"]+)"\\} (\\S+)$`, "gm"))) out.set(m[1]!, Number(m[2]));
  return out;
}

describe(`GPU telemetry through NVML (${TARGET_RUNTIME})`, () => {
  let fake = "";
  let server: SpawnedServer;
  beforeAll(async () => {
    fake = buildFakeNvml();
    server = await start({ LD_LIBRARY_PATH: fake });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("serves Triton's GPU families for every GPU and MIG device, in Triton's units", async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(byGpu(text, "nv_gpu_utilization")).toEqual(new Map([[H100, 0.42]])); // not on a MIG-mode GPU nor a MIG device
    expect(byGpu(text, "nv_gpu_memory_total_bytes")).toEqual(new Map([[H100, 80 * GiB], [A100, 40 * GiB], [MIG1, 20 * GiB], [MIG3, 20 * GiB]]));
    expect(byGpu(text, "nv_gpu_memory_used_bytes")).toEqual(new Map([[H100, 20 * GiB], [A100, 6 * GiB], [MIG1, 1 * GiB], [MIG3, 5 * GiB]]));
    expect(byGpu(text, "nv_gpu_power_usage")).toEqual(new Map([[H100, 250], [A100, 90]]));
    expect(byGpu(text, "nv_gpu_power_limit")).toEqual(new Map([[H100, 700], [A100, 400]]));
    expect(byGpu(text, "tensorfn_gpu_temperature_celsius")).toEqual(new Map([[H100, 55], [A100, 40]]));
    expect(text).toMatch(/^# TYPE nv_energy_consumption counter$/m);
    expect(text).toContain(`tensorfn_gpu_info{gpu_uuid="${MIG3}",name="NVIDIA A100-SXM4-40GB MIG 3g.20gb",parent_uuid="${A100}"} 1`);
    expect(server.output()).toMatch(/GPU telemetry: 2 GPU\(s\), 2 MIG device\(s\) through NVML/);
    // Valid exposition but for Triton's own naming (a counter without `_total`) and prom-client's.
    requireTool("promtool");
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    const problems = `${check.stdout}${check.stderr}`.split("\n").filter((p) => p && !/^(nv_\w+ (counter metrics should have|non-histogram|metric names should not contain)|nodejs_active_\w+_total non-counter)/.test(p));
    expect(problems).toEqual([]);
  });

  it("counts energy in joules since the server started, sampled on its interval", async () => {
    const first = byGpu(await (await fetch(`${server.url}/metrics`)).text(), "nv_energy_consumption").get(H100)!;
    await new Promise((r) => setTimeout(r, 700)); // several 200 ms samples
    const later = byGpu(await (await fetch(`${server.url}/metrics`)).text(), "nv_energy_consumption").get(H100)!;
    // The fake's counter grows 500 J a reading; the first reading is the server's zero.
    expect(first % 500).toBe(0);
    expect(later - first).toBeGreaterThanOrEqual(1000);
    expect(later % 500).toBe(0);
  });

  it("sets the device budget from the CUDA device's free memory at start, as CUDA_VISIBLE_DEVICES names it", async () => {
    // The H100: 60 GiB free less a tenth of 80 GiB.
    expect(server.output()).toMatch(/device memory budget 53248 MiB: NVIDIA H100 80GB HBM3 \(GPU-11111111/);
    const pinned = await start({ LD_LIBRARY_PATH: fake, CUDA_VISIBLE_DEVICES: MIG3 });
    try {
      // The MIG slice: 15 GiB free less 2 GiB.
      await pinned.waitFor(/device memory budget 13312 MiB: NVIDIA A100-SXM4-40GB MIG 3g\.20gb \(MIG-aaaaaaaa-0000-0000-0000-000000000003\)/);
    } finally {
      await pinned.stop();
    }
  });

  it("without a driver: one log line, no GPU families, and the server serves", async () => {
    const plain = await start({});
    try {
      const text = await (await fetch(`${plain.url}/metrics`)).text();
      expect(text).not.toMatch(/nv_gpu_|nv_energy/);
      expect(plain.output()).toMatch(/GPU telemetry off: no NVIDIA driver: libnvidia-ml\.so\.1/);
      expect((await fetch(`${plain.url}/v2/health/ready`)).status).toBe(200);
    } finally {
      await plain.stop();
    }
  });
});
