import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { median, rawColdStart } from "../lifecycle/raw-cold-start.ts";
import { firstResponseAfterPark } from "../lifecycle/served-cold-start.ts";
import { spawnServer } from "../../../harness/server-process.ts";

/** One model's wake-up from PARKED against the raw cost of the same work (issue 11, target 6). */
export interface ColdStart {
  model: string;
  /** Raw: create the onnxruntime session from bytes in memory and run it once, in-process (median). */
  rawMs: number;
  /** The same, each time in a fresh process (median): what a hand-written script pays at startup. */
  rawFreshMs?: number;
  /** Served: the first response after `POST …/park` with `park: host` (median, client side). */
  fromParkedMs: number;
  reps: number;
  /** Whether the wakes used the weights in place (the function's `parameters.weights_in_place`). */
  weightsInPlace?: boolean;
}

/** The models target 6 names. */
export const COLD_START_MODELS = ["mlp", "resnet"] as const;

/**
 * bench/suites/lifecycle.ts's PARKED measurement, shortened for `npm run bench`: the raw cold start in this
 * process, then a tensorfn server (default control mode) on copies of the bundled functions with
 * `scale: { idle_timeout_ms: 0, park: host }` appended, each parked and called `reps` times.
 */
export async function measureColdStarts(functionsDir: string, options: { serverRoot: string; reps: number; log: (line: string) => void }): Promise<ColdStart[]> {
  const raw = new Map<string, number>();
  const fresh = new Map<string, number>();
  for (const model of COLD_START_MODELS) {
    const path = join(functionsDir, model, "1", "model.onnx");
    raw.set(model, (await rawColdStart(path, options.reps)).fromMemoryMs);
    fresh.set(model, median(Array.from({ length: options.reps }, () => freshCreateMs(options.serverRoot, path))));
  }
  const repo = mkdtempSync(join(tmpdir(), "tensorfn-bench-park-"));
  for (const model of COLD_START_MODELS) {
    cpSync(join(functionsDir, model), join(repo, model), { recursive: true });
    const yaml = readFileSync(join(functionsDir, model, "function.yaml"), "utf8");
    writeFileSync(join(repo, model, "function.yaml"), `${yaml}\nscale: { idle_timeout_ms: 0, park: host }\n`);
  }
  const server = await spawnServer("node", [join(options.serverRoot, "adapters", "node", "bin.mjs"), "serve", "--repo", repo, "--port", "0"]);
  const results: ColdStart[] = [];
  try {
    for (const model of COLD_START_MODELS) {
      const fromParkedMs = await firstResponseAfterPark(server.url, model, options.reps);
      const config = (await (await fetch(`${server.url}/v2/models/${model}/config`)).json()) as { parameters?: Record<string, { string_value?: string }> };
      const weightsInPlace = config.parameters?.weights_in_place?.string_value === "true";
      results.push({ model, rawMs: raw.get(model)!, rawFreshMs: fresh.get(model), fromParkedMs, reps: options.reps, weightsInPlace });
      const weights = weightsInPlace ? ", its weights in place" : ", its weights copied";
      options.log(`cold start ${model}: raw create + first run ${raw.get(model)!.toFixed(1)} ms (in a fresh process ${fresh.get(model)!.toFixed(1)} ms), first response from PARKED ${fromParkedMs.toFixed(1)} ms${weights}`);
    }
  } finally {
    await server.stop();
    rmSync(repo, { recursive: true, force: true });
  }
  return results;
}

/** bench/suites/lifecycle/raw-fresh-create.ts in a process of its own: one create + first run, in ms. */
function freshCreateMs(root: string, modelPath: string): number {
  const out = execFileSync("node", ["--import", "tsx", join(root, "bench", "suites", "lifecycle", "raw-fresh-create.ts"), modelPath], { cwd: root, encoding: "utf8" });
  return (JSON.parse(out.trim().split("\n").at(-1)!) as { ms: number }).ms;
}
