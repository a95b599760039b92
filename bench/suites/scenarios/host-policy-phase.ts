import { appendFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { spawnServer } from "../../../harness/server-process.ts";
import type { SpawnedServer } from "../../../harness/server-process.ts";
import { benchRequest, measureStep } from "./measure-step.ts";
import type { Measured } from "./measure-step.ts";

/** Rounds of the two layouts, alternated so that both see the same windows of the machine. */
export const HOST_POLICY_ROUNDS = 3;
/** Closed-loop clients of the saturating function. */
export const BATCH_CLIENTS = 8;

/** One window: the latency-critical function's requests beside the batch function's. */
export interface HostPolicyWindow {
  layout: "pinned" | "unpinned";
  round: number;
  latency: Measured;
  batch: Measured;
}

export interface HostPolicyRun {
  /** The pinned layout's cores: the latency-critical function's process, the batch one's. */
  cores: { latency: string; batch: string };
  windows: HostPolicyWindow[];
}

/**
 * Issue 53's host-policy row: `latency` (mlp, one closed-loop client) beside `batch` (resnet,
 * BATCH_CLIENTS clients, saturating), each with `isolation: process`, on two servers started side
 * by side — one with the two processes pinned to disjoint cores (latency on core 0, batch on core
 * 1), one unpinned — measured in alternating windows. Undefined on a machine with one core.
 */
export async function measureHostPolicies(functions: string, options: { serverRoot: string; scale: number; log: (line: string) => void }): Promise<HostPolicyRun | undefined> {
  if (os.availableParallelism() < 2) {
    options.log("bench: host policies need two cores at least: skipped");
    return undefined;
  }
  const cores = { latency: "0", batch: "1" };
  const repos = { pinned: repository(functions, cores), unpinned: repository(functions, undefined) };
  const servers: Partial<Record<"pinned" | "unpinned", SpawnedServer>> = {};
  try {
    for (const layout of ["pinned", "unpinned"] as const) {
      servers[layout] = await spawnServer("node", [join(options.serverRoot, "adapters", "node", "bin.mjs"), "serve", "--repo", repos[layout], "--model-control-mode", "none", "--port", "0"]);
    }
    const requests = {
      latency: await benchRequest(servers.pinned!.url, "latency", { encoding: "binary" }),
      batch: await benchRequest(servers.pinned!.url, "batch", { encoding: "binary" }),
    };
    const windows: HostPolicyWindow[] = [];
    const window = { warmupMs: 1000 * options.scale, durationMs: 4000 * options.scale };
    for (let round = 1; round <= HOST_POLICY_ROUNDS; round++) {
      for (const layout of round % 2 === 1 ? (["pinned", "unpinned"] as const) : (["unpinned", "pinned"] as const)) {
        const server = servers[layout]!;
        const plan = { target: layout, url: server.url, pid: server.pid, stats: true, encoding: "binary" as const, ...window };
        const [latency, batch] = await Promise.all([
          measureStep({ ...plan, model: "latency", concurrency: 1 }, requests.latency),
          measureStep({ ...plan, model: "batch", concurrency: BATCH_CLIENTS }, requests.batch),
        ]);
        options.log(`bench: host policies, round ${round}, ${layout}: latency p99 ${latency.latencyMs?.p99.toFixed(2)} ms beside batch ${batch.inferPerS.toFixed(1)} infer/s`);
        windows.push({ layout, round, latency, batch });
      }
    }
    return { cores, windows };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    for (const repo of Object.values(repos)) rmSync(repo, { recursive: true, force: true });
  }
}

/** `latency` (mlp) and `batch` (resnet), each in a process of its own, pinned to `cores` when given. */
function repository(functions: string, cores: { latency: string; batch: string } | undefined): string {
  const repo = mkdtempSync(join(os.tmpdir(), "tensorfn-host-policy-"));
  for (const [name, from] of [["latency", "mlp"], ["batch", "resnet"]] as const) {
    cpSync(join(functions, from), join(repo, name), { recursive: true });
    const policy = cores ? `, host_policy: { cpu_cores: "${cores[name]}" }` : "";
    appendFileSync(join(repo, name, "function.yaml"), `\nisolation: process\ninstance_group: [{ count: 1${policy} }]\n`);
  }
  return repo;
}
