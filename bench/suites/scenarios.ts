/**
 * `npm run bench`: measures, in one run on this machine, the raw onnxruntime-node limit, tensorfn
 * against two hand-written servers (plain node:http and Hono) with JSON and binary tensors, tensorfn
 * with and without dynamic batching, the per-request overhead, the adaptive queue delay, readiness
 * and scrapes under load, the wake-up from PARKED and host policies (a latency-critical function
 * beside a saturating one, pinned and not), then writes bench/results/scenarios.md with issue 11's
 * Targets table (and the step data to bench/out/scenarios.json). Progress goes to stderr. Takes
 * about ten minutes (the plan's length is printed at the start).
 *
 *   npm run bench [-- --quick] [-- --server-root <dir>]
 *
 * `--quick` shortens every window fourfold and writes to bench/out/ instead (for trying changes);
 * `--server-root` serves tensorfn from another checkout (e.g. a clean `git archive` of HEAD).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { writeBenchRepository } from "./scenarios/bench-repository.ts";
import { measureColdStarts } from "./scenarios/cold-start-phase.ts";
import { measureHostPolicies } from "./scenarios/host-policy-phase.ts";
import { measureRaw, recheckRaw } from "./scenarios/raw-phase.ts";
import { renderResults } from "./scenarios/results-md.ts";
import { resultsPagePath, writeResultsSection } from "./results-section.ts";
import type { Measured } from "./scenarios/measure-step.ts";
import type { RunSubject, ScenarioResults } from "./scenarios/scenario-results.ts";
import { benchFunctions, JIT_WARMUP_MS, plannedSeconds, planSteps, runServedSteps, warmServers } from "./scenarios/served.ts";
import { spawnServer } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FUNCTIONS = join(ROOT, "functions");

const { values } = parseArgs({ options: { quick: { type: "boolean", default: false }, "server-root": { type: "string" }, from: { type: "string" } } });
const scale = values.quick ? 0.25 : 1;
const serverRoot = resolve(values["server-root"] ?? ROOT);
const log = (line: string) => void process.stderr.write(`${line}\n`);

// `--from bench/out/scenarios.json`: write the section again from a saved run (its numbers and
// commit), without measuring: for a change to how results are explained, not to what is measured.
if (values.from) {
  const saved = JSON.parse(readFileSync(values.from, "utf8")) as ScenarioResults;
  writeResultsSection("scenarios", renderResults(saved));
  log(`bench: wrote ${resultsPagePath("scenarios")} from ${values.from} (the run of ${saved.startedAt} at ${saved.subject?.commit ?? "?"})`);
  process.exit(0);
}

for (const name of ["simple", "mlp", "resnet"]) {
  if (!existsSync(join(FUNCTIONS, name, "1", "model.onnx"))) {
    log(`bench: functions/${name}/1/model.onnx is missing; build the models with: npx tsx models/build.ts`);
    process.exit(1);
  }
}

const started = performance.now();
const startedAt = new Date().toISOString();
const machine = {
  nproc: os.availableParallelism(),
  cpuModel: /^model name\s*:\s*(.+)$/m.exec(readText("/proc/cpuinfo"))?.[1] ?? os.cpus()[0]?.model ?? "unknown",
  node: process.version,
  onnxruntimeNode: JSON.parse(readText(join(ROOT, "node_modules", "onnxruntime-node", "package.json")) || "{}").version ?? "unknown",
  loadAverage: os.loadavg().map((l) => l.toFixed(2)).join(" "),
};
log(`bench: ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}, onnxruntime-node ${machine.onnxruntimeNode}, load ${machine.loadAverage}`);

const subject = runSubject(serverRoot);
log(`bench: measuring tensorfn ${subject.commit}${subject.dirty ? " + uncommitted changes" : ""} from ${serverRoot} on ${subject.runtime}`);
log("bench: 1/6 raw onnxruntime-node limit (about 50 s)");
const raw = await measureRaw(FUNCTIONS, { scale, log });

const repo = writeBenchRepository(FUNCTIONS, benchFunctions());
const servers: SpawnedServer[] = [];
let served: Measured[];
let placements: Record<string, string> = {};
try {
  log(`bench: 2/6 starting tensorfn (${serverRoot}) on ${repo}, the hand-written servers and the bare HTTP server`);
  const start = async (args: string[]) => {
    const server = await spawnServer("node", args);
    servers.push(server);
    return server;
  };
  // Every function loaded up front and never parked (Triton's default mode), so no step pays a load.
  const tensorfn = await start([join(serverRoot, "adapters", "node", "bin.mjs"), "serve", "--repo", repo, "--model-control-mode", "none", "--port", "0"]);
  const naive = await start(["--import", "tsx", join(ROOT, "bench", "suites", "naive-server.ts"), "--repo", FUNCTIONS, "--models", "simple,mlp,resnet", "--port", "0"]);
  const handwritten = await start(["--import", "tsx", join(ROOT, "bench", "suites", "handwritten-server.ts"), "--repo", FUNCTIONS, "--models", "simple,mlp", "--port", "0"]);
  const bare = await start(["--import", "tsx", join(ROOT, "bench", "suites", "scenarios", "bare-http-server.ts"), "--port", "0"]);
  const targets = {
    tensorfn: { name: "tensorfn", url: tensorfn.url, pid: tensorfn.pid },
    naive: { name: "naive", url: naive.url, pid: naive.pid },
    // No metadata routes of its own: requests are built from tensorfn's metadata for the same model.
    handwritten: { name: "handwritten", url: handwritten.url, pid: handwritten.pid, metadataUrl: tensorfn.url },
    bare: { name: "bare", url: bare.url, pid: bare.pid, metadataUrl: tensorfn.url },
  } as const;
  placements = await fetchPlacements(tensorfn.url, benchFunctions().map((f) => f.name));
  log(`bench: execution_thread ${Object.entries(placements).map(([name, thread]) => `${name}=${thread}`).join(" ")}`);
  log(`bench: warming every server up (${((JIT_WARMUP_MS * scale) / 1000).toFixed(1)} s per model and encoding, 8 clients, not reported)`);
  await warmServers([targets.handwritten, targets.naive, targets.tensorfn, targets.bare], scale);
  const steps = planSteps(targets, scale);
  log(`bench: 3/6 ${steps.length} served steps, about ${plannedSeconds(steps).toFixed(0)} s`);
  served = await runServedSteps(steps, log);
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(repo, { recursive: true, force: true });
}
log("bench: 4/6 first responses from PARKED against raw session create + first run");
const coldStarts = await measureColdStarts(FUNCTIONS, { serverRoot, reps: values.quick ? 3 : 5, log });
log("bench: 5/6 raw recheck of the best batches (drift)");
raw.recheck = await recheckRaw(FUNCTIONS, raw, { scale, log });
log("bench: 6/6 host policies: a latency-critical function beside a saturating one, pinned and not");
const hostPolicies = await measureHostPolicies(FUNCTIONS, { serverRoot, scale, log });
const results: ScenarioResults = { startedAt, seconds: (performance.now() - started) / 1000, machine, subject, raw, served, coldStarts, placements, ...(hostPolicies && { hostPolicies }) };

const outDir = join(ROOT, "bench", "out");
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, values.quick ? "scenarios.quick.json" : "scenarios.json"), JSON.stringify(results, null, 2) + "\n");
const resultsPath = values.quick ? join(outDir, "scenarios.quick.md") : resultsPagePath("scenarios");
if (values.quick) writeFileSync(resultsPath, renderResults(results));
else writeResultsSection("scenarios", renderResults(results));
log(`bench: wrote ${resultsPath} after ${results.seconds.toFixed(0)} s`);

/** The commit and working-tree state of `root`, and the runtime that serves it (`node`, as spawned). */
function runSubject(root: string): RunSubject {
  const git = (...args: string[]) => execFileSync("git", ["-C", root, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  let commit = "unknown";
  let dirty: boolean | null = null;
  try {
    commit = git("rev-parse", "--short", "HEAD");
    dirty = git("status", "--porcelain").length > 0;
  } catch {
    // Not a git checkout (e.g. a `git archive` of HEAD): say so rather than guess.
  }
  return { serverRoot: root, commit, dirty, runtime: `Node ${process.version}` };
}

/** Where each function computes (`parameters.execution_thread` of its effective config), by name. */
async function fetchPlacements(url: string, names: string[]): Promise<Record<string, string>> {
  const entries = await Promise.all(
    names.map(async (name) => {
      const config = (await (await fetch(`${url}/v2/models/${name}/config`)).json()) as { parameters?: Record<string, { string_value?: string }> };
      return [name, config.parameters?.execution_thread?.string_value ?? "n/a"] as const;
    }),
  );
  return Object.fromEntries(entries);
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
