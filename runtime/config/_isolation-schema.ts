// function.yaml's `isolation`: a function in the server's process (shared, the default) or in a
// child process of its own, with a memory cap and environment. Its schema and the rules it has
// with the other fields.
import * as z from "zod";
import type { RawConfig } from "./function-schema.ts";

export type IsolationMode = "shared" | "process";

/** Ours: where a function's instances and handler run. */
export interface IsolationConfig {
  mode: IsolationMode;
  /** `process`: resident memory past which the process is killed and restarted (bytes). */
  max_memory?: number;
  /** `process`: variables added to its environment (CUDA_VISIBLE_DEVICES=MIG-…, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE). */
  env: Record<string, string>;
}

const MIN_MEMORY = 64 * 2 ** 20;
const SIZE = /^([0-9]+(?:\.[0-9]+)?)\s*([kKmMgGtT]?)i?[bB]?$/;
const UNITS: Record<string, number> = { "": 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };

/** `isolation: process` or `isolation: { mode: process, max_memory: 1G, env: {…} }`. */
export function isolationSchema() {
  const size = z.union([z.number(), z.string()]).transform((v, ctx) => {
    const match = typeof v === "string" ? SIZE.exec(v.trim()) : undefined;
    const bytes = typeof v === "number" ? v : match ? Math.round(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!) : NaN;
    if (!Number.isSafeInteger(bytes) || bytes < MIN_MEMORY) {
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(v)} is not a size of at least 64M (bytes, or with a k/M/G/T suffix)` });
      return z.NEVER;
    }
    return bytes;
  });
  const env = z.record(z.string(), z.preprocess((v) => (typeof v === "number" || typeof v === "boolean" ? String(v) : v), z.string().max(4096))).superRefine((e, ctx) => {
    for (const name of Object.keys(e)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)) ctx.addIssue({ code: "custom", path: [name], message: "is not an environment variable's name (letters, digits and _, not starting with a digit)" });
    }
  });
  return z.preprocess(
    (v) => (typeof v === "string" ? { mode: v } : v),
    z.strictObject({
      mode: z.enum(["shared", "process"], { error: (issue) => `${JSON.stringify(issue.input)} is not shared or process` }),
      max_memory: size.optional(),
      env: env.refine((e) => Object.keys(e).length <= 64, "at most 64 variables").default({}),
    }),
  );
}

/** What `isolation: process` does not run (yet), and settings that need it. */
export function isolationProblems(config: RawConfig, dialect: "yaml" | "json" = "yaml"): { path: PropertyKey[]; problem: string }[] {
  const problems: { path: PropertyKey[]; problem: string }[] = [];
  // A host policy pins a process: the function's own, which every instance shares. A Triton
  // config cannot say `isolation`: its policy implies the process (the schema adds it).
  const policies = config.instance_group.map((g, i) => ({ i, policy: g.host_policy })).filter((p) => p.policy !== undefined && p.policy !== "");
  if (dialect === "json" && policies.length > 0) config = { ...config, isolation: { mode: "process", env: {} } };
  if (policies.length > 0 && config.isolation?.mode !== "process") {
    problems.push({ path: ["instance_group", policies[0]!.i, "host_policy"], problem: "pins the function's process: it needs isolation: process" });
  } else if (policies.length > 0 && (policies.length < config.instance_group.length || new Set(policies.map((p) => JSON.stringify(p.policy))).size > 1)) {
    const odd = config.instance_group.findIndex((g) => JSON.stringify(g.host_policy) !== JSON.stringify(policies[0]!.policy));
    problems.push({ path: ["instance_group", odd, "host_policy"], problem: "differs from another group's: under isolation: process every instance runs in the one process a policy pins" });
  }
  const isolation = config.isolation;
  if (!isolation) return problems;
  if (isolation.mode === "shared") {
    if (isolation.max_memory !== undefined) problems.push({ path: ["isolation", "max_memory"], problem: "applies to isolation mode process only" });
    if (Object.keys(isolation.env).length > 0) problems.push({ path: ["isolation", "env"], problem: "applies to isolation mode process only" });
    return problems;
  }
  const refuse = (path: PropertyKey[], what: string) => problems.push({ path, problem: `isolation: process does not run ${what} yet; use isolation: shared` });
  if (config.platform === "ensemble" || config.ensemble_scheduling) refuse(["isolation"], "ensembles (their steps are functions of their own: isolate those)");
  if (config.generation) refuse(["generation"], "generators (a step's KV cache would cross the process every token)");
  if (config.embedding) refuse(["embedding"], "encoders answering /v1/embeddings");
  if (config.sequence_batching && config.handler) refuse(["handler"], "a sequence batcher's handler hooks");
  if (config.handler && config.backend !== "handler") refuse(["handler"], "preprocess/postprocess around a model (only a backend: handler function's handler)");
  if (config.backend === "identity") refuse(["backend"], "the identity backend");
  if (config.accelerator === "webgpu" || config.accelerator === "wasm") refuse(["accelerator"], `onnxruntime-web (accelerator ${config.accelerator})`);
  return problems;
}

/** Whether an instance group names a host policy ("" is Triton's none). */
export function hasHostPolicy(config: RawConfig): boolean {
  return config.instance_group.some((g) => g.host_policy !== undefined && g.host_policy !== "");
}
