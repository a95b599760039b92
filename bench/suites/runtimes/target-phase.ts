/**
 * Measures issue 11's targets 1, 2 and 7 for tensorfn under every runtime in one sitting: one
 * tensorfn server per runtime on the same repository, the hand-written and bare baselines under
 * Node beside them, all up at once so that each point's baseline runs back to back with the
 * runtimes it is compared with (bench/suites/runtimes/target-plan.ts gives the order).
 */
import { rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { EncodedRequest } from "../../../adapters/bench/request-body.ts";
import { writeBenchRepository } from "../scenarios/bench-repository.ts";
import { benchRequest, measureStep } from "../scenarios/measure-step.ts";
import { BUNDLED, warmServers } from "../scenarios/served.ts";
import { spawnServer } from "../../../harness/server-process.ts";
import type { SpawnedServer } from "../../../harness/server-process.ts";
import { planTargetSteps, targetSeconds } from "./target-plan.ts";
import type { TargetServer, TargetTiming } from "./target-plan.ts";
import type { RuntimeStep, RuntimeTargetsRun } from "./runtime-targets.ts";

/** How to start tensorfn under one runtime on `repo`: a command and its arguments. */
export type ServeCommand = (repo: string) => [string, string[]];

/**
 * Starts the servers, runs the plan once (no retaking of disturbed windows, which would make the
 * run's length depend on the neighbours; each step keeps its `other` cores instead) and stops
 * them. A runtime whose server does not start is reported in `unavailable` and left out.
 */
export async function measureRuntimeTargets(commands: Record<string, ServeCommand>, options: { root: string; timing: TargetTiming; compareTiming: TargetTiming; log: (line: string) => void }): Promise<RuntimeTargetsRun> {
  const { root, timing, compareTiming, log } = options;
  // Copies of the examples with their bundled function.yaml, as `npm run bench` serves them.
  const repo = writeBenchRepository(join(root, "functions"), BUNDLED.map((name) => ({ name, from: name })));
  const processes: SpawnedServer[] = [];
  const unavailable: Record<string, string> = {};
  const steps: RuntimeStep[] = [];
  try {
    const start = async (command: string, args: string[]) => {
      const server = await spawnServer(command, args, { timeoutMs: 90_000 });
      processes.push(server);
      return server;
    };
    const baseline = (script: string, args: string[]) => start("node", ["--import", "tsx", join(root, "bench", "suites", script), ...args, "--port", "0"]);
    const [handwritten, bare] = await Promise.all([
      baseline("handwritten-server.ts", ["--repo", join(root, "functions"), "--models", BUNDLED.join(",")]),
      baseline("scenarios/bare-http-server.ts", []),
    ]);
    // One after another: each server times its models at load (`execution_thread: auto`), and
    // three loading at once on 2 cores inflated those timings (mlp then went to a worker).
    const started: PromiseSettledResult<readonly [string, SpawnedServer]>[] = [];
    for (const [runtime, command] of Object.entries(commands)) {
      started.push(...(await Promise.allSettled([start(...command(repo)).then((server) => [runtime, server] as const)])));
    }
    const tensorfn: TargetServer[] = [];
    for (const [i, result] of started.entries()) {
      const runtime = Object.keys(commands)[i]!;
      if (result.status === "fulfilled") tensorfn.push({ role: "tensorfn", runtime, url: result.value[1].url, pid: result.value[1].pid });
      else {
        unavailable[runtime] = firstLine(result.reason);
        log(`runtimes: tensorfn under ${runtime} did not start: ${unavailable[runtime]}`);
      }
    }
    if (tensorfn.length === 0) return { runtimes: Object.keys(commands), nproc: availableParallelism(), timing, compareTiming, steps, unavailable };
    const baselines = { handwritten: { role: "handwritten", runtime: null, url: handwritten.url, pid: handwritten.pid }, bare: { role: "bare", runtime: null, url: bare.url, pid: bare.pid } } as const;
    const plan = planTargetSteps({ ...baselines, tensorfn }, timing, compareTiming);
    log(`runtimes: targets 1, 2 and 7 under ${tensorfn.map((s) => s.runtime).join(", ")}: ${plan.length} steps, about ${targetSeconds(plan).toFixed(0)} s`);
    // The same JIT warm-up for every server before the first measured step (see warmServers).
    const meta = tensorfn[0]!.url;
    await warmServers([{ name: "handwritten", url: handwritten.url, pid: handwritten.pid, metadataUrl: meta }, ...tensorfn.map((s) => ({ name: "tensorfn" as const, url: s.url, pid: s.pid })), { name: "bare", url: bare.url, pid: bare.pid, metadataUrl: meta }]);
    // One request per model and encoding, built from one tensorfn's metadata (seeded data): every server gets the same bytes.
    const requests = new Map<string, EncodedRequest>();
    const began = performance.now();
    for (const [index, step] of plan.entries()) {
      const { server } = step;
      const key = `${step.model} ${step.encoding}`;
      try {
        if (!requests.has(key)) requests.set(key, await benchRequest(tensorfn[0]!.url, step.model, { encoding: step.encoding }));
        const measured = await measureStep({ target: server.role, url: server.url, pid: server.pid, stats: server.role === "tensorfn", model: step.model, concurrency: step.concurrency, warmupMs: step.warmupMs, durationMs: step.durationMs, encoding: step.encoding, probe: step.probe }, requests.get(key)!);
        steps.push({ ...measured, runtime: server.runtime, ...(step.repeat ? { repeat: step.repeat } : {}) });
        const elapsed = ((performance.now() - began) / 1000).toFixed(0);
        const probes = measured.probes ? `, ready p99 ${measured.probes.ready?.p99.toFixed(2) ?? "n/a"} ms, /metrics max ${measured.probes.metrics?.max.toFixed(1) ?? "n/a"} ms` : "";
        const errors = measured.errors > 0 ? `, ${measured.errors} errors (${measured.firstError})` : "";
        log(`[${index + 1}/${plan.length}, ${elapsed}s] ${server.role}${server.runtime ? ` under ${server.runtime}` : ""} ${step.model} c=${step.concurrency} ${step.encoding}: ${measured.inferPerS.toFixed(0)} req/s, p50 ${measured.latencyMs?.p50.toFixed(2) ?? "n/a"} ms${errors}${probes}, other work ${measured.cores.other?.toFixed(2) ?? "n/a"} cores`);
      } catch (error) {
        log(`[${index + 1}/${plan.length}] ${server.role}${server.runtime ? ` under ${server.runtime}` : ""} ${step.model} c=${step.concurrency} ${step.encoding} failed: ${firstLine(error)}`);
      }
    }
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    rmSync(repo, { recursive: true, force: true });
  }
  return { runtimes: Object.keys(commands), nproc: availableParallelism(), timing, compareTiming, steps, unavailable };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n", 1)[0]!;
}
