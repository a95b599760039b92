import { RuntimeError } from "../core/mod.ts";
import type { Clock, Platform } from "../core/mod.ts";
import { completeConfig, completeIdentityConfig, formatIssue, identitySignature, parseFunctionConfig } from "../config/mod.ts";
import type { Accelerator, DeclaredConfig, FunctionConfig } from "../config/mod.ts";
import type { Backend, Session } from "../backends/backend.ts";
import { scanRepository, selectVersions } from "../repository/mod.ts";
import type { FunctionEntry } from "../repository/mod.ts";
import { Deployment } from "./deployment.ts";
import { instancePlacements } from "./instance-placement.ts";
import type { DeploymentState } from "./deployment-state.ts";

export interface ModelManagerOptions {
  platform: Platform;
  /** Repository root: one sub-folder per function. */
  repository: string;
  /** Backends by config `backend` name ("onnxruntime", "identity"). */
  backends: Record<string, Backend>;
  clock: Clock;
  /** Server-wide default when a function.yaml does not say (`--accelerator`). */
  accelerator?: Accelerator;
}

/** One row of the repository index. */
export interface VersionStatus {
  name: string;
  version?: string;
  state: DeploymentState;
  reason: string;
}

interface VersionRecord {
  state: DeploymentState;
  reason: string;
  deployment?: Deployment;
}

interface FunctionRecord {
  entry: FunctionEntry;
  declared?: DeclaredConfig;
  /** Why the function as a whole cannot load (bad function.yaml, no versions). */
  error?: string;
  versions: Map<number, VersionRecord>;
}

/**
 * Owns the deployments of one repository. With control mode "none" (the only one so far) every
 * function is loaded at start; a function that fails stays visible with its reason while the
 * others serve.
 */
export class ModelManager {
  readonly #options: ModelManagerOptions;
  readonly #functions = new Map<string, FunctionRecord>();

  constructor(options: ModelManagerOptions) {
    this.#options = options;
  }

  /** Scans the repository and loads every function's served versions. */
  async loadAll(): Promise<void> {
    const entries = await scanRepository(this.#options.platform, this.#options.repository);
    await Promise.all(entries.map((entry) => this.#loadFunction(entry)));
  }

  /** The deployment that serves `name` (and `version`, else the highest ready one). */
  resolve(name: string, version?: string): Deployment {
    const fn = this.#functions.get(name);
    if (!fn) throw new RuntimeError("NOT_FOUND", `Request for unknown model: '${name}' is not found`);
    if (version !== undefined) {
      const record = fn.versions.get(Number(version));
      if (!record || !/^[0-9]+$/.test(version)) {
        throw new RuntimeError("NOT_FOUND", `Request for unknown model: '${name}' version ${version} is not found`);
      }
      if (!record.deployment || record.state !== "READY") {
        throw new RuntimeError("UNAVAILABLE", `model '${name}' version ${version} is not ready: ${record.reason || record.state}`);
      }
      return record.deployment;
    }
    const ready = [...fn.versions.entries()].filter(([, r]) => r.state === "READY" && r.deployment);
    if (ready.length === 0) {
      const reason = fn.error ?? [...fn.versions.values()].map((r) => r.reason).find(Boolean) ?? "no version is loaded";
      throw new RuntimeError("UNAVAILABLE", `model '${name}' is not ready: ${reason}`);
    }
    return ready.sort(([a], [b]) => b - a)[0]![1].deployment!;
  }

  /**
   * Loaded deployments, for the statistics endpoint: all of them, one function's, or one
   * version's. Unknown names and versions are NOT_FOUND, as for inference.
   */
  deployments(name?: string, version?: string): Deployment[] {
    if (name === undefined) {
      return [...this.#functions.keys()].sort().flatMap((n) => this.deployments(n));
    }
    const fn = this.#functions.get(name);
    if (!fn) throw new RuntimeError("NOT_FOUND", `Request for unknown model: '${name}' is not found`);
    if (version !== undefined && !fn.versions.has(Number(version))) {
      throw new RuntimeError("NOT_FOUND", `Request for unknown model: '${name}' version ${version} is not found`);
    }
    return [...fn.versions.entries()]
      .filter(([v, r]) => r.deployment && (version === undefined || v === Number(version)))
      .sort(([a], [b]) => a - b)
      .map(([, r]) => r.deployment!);
  }

  /** Served version numbers of a function, ascending (for model metadata). */
  versions(name: string): string[] {
    const fn = this.#functions.get(name);
    return fn ? [...fn.versions.keys()].sort((a, b) => a - b).map(String) : [];
  }

  /** Every function and version with its state, for the repository index. */
  index(): VersionStatus[] {
    const rows: VersionStatus[] = [];
    for (const [name, fn] of [...this.#functions.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (fn.versions.size === 0) rows.push({ name, state: fn.error ? "FAILED" : "UNAVAILABLE", reason: fn.error ?? "" });
      for (const [version, r] of fn.versions) rows.push({ name, version: String(version), state: r.state, reason: r.reason });
    }
    return rows;
  }

  /** True when every registered function has a ready version (Triton's strict readiness). */
  allReady(): boolean {
    return [...this.#functions.values()].every((fn) => [...fn.versions.values()].some((r) => r.state === "READY"));
  }

  /** Drains and releases every deployment. */
  async stop(): Promise<void> {
    const unloads = [...this.#functions.values()].flatMap((fn) => [...fn.versions.values()].map((r) => r.deployment?.unload()));
    await Promise.all(unloads);
  }

  async #loadFunction(entry: FunctionEntry): Promise<void> {
    const fn: FunctionRecord = { entry, versions: new Map() };
    this.#functions.set(entry.name, fn);
    const { platform } = this.#options;
    const file = entry.configFile ?? `${entry.dir}/function.yaml`;
    const text = entry.configFile ? await platform.readTextFile(entry.configFile) : "";
    const parsed = parseFunctionConfig(text, { file, name: entry.name });
    if (!parsed.config || parsed.errors.length > 0) {
      fn.error = parsed.errors.map(formatIssue).join("; ");
      platform.log.error(`${entry.name}: invalid configuration: ${fn.error}`);
      return;
    }
    fn.declared = parsed.config;
    const served = selectVersions(parsed.config.version_policy, entry.versions);
    if (served.length === 0) {
      fn.error = `no version folder to serve (found: ${entry.versions.join(", ") || "none"})`;
      platform.log.error(`${entry.name}: ${fn.error}`);
      return;
    }
    for (const v of served) fn.versions.set(v, { state: "LOADING", reason: "" });
    await Promise.all(served.map((v) => this.#loadVersion(fn, v)));
  }

  async #loadVersion(fn: FunctionRecord, version: number): Promise<void> {
    const record = fn.versions.get(version)!;
    const { platform } = this.#options;
    const started = performance.now();
    try {
      record.deployment = await this.#createDeployment(fn.entry, fn.declared!, version);
      record.state = "READY";
      const d = record.deployment;
      platform.log.info(`${fn.entry.name} v${version}: READY on ${d.provider} in ${Math.round(performance.now() - started)} ms`);
    } catch (error) {
      record.state = "FAILED";
      record.reason = `failed to load '${fn.entry.name}' version ${version}: ${(error as Error).message}`;
      platform.log.error(`${fn.entry.name} v${version}: ${record.reason}`);
    }
  }

  async #createDeployment(entry: FunctionEntry, written: DeclaredConfig, version: number): Promise<Deployment> {
    const { platform, backends, clock } = this.#options;
    const declared = { ...written, accelerator: written.accelerator ?? this.#options.accelerator ?? "auto" };
    const backend = backends[declared.backend];
    if (!backend) throw new RuntimeError("INVALID_ARG", `backend '${declared.backend}' is not available`);
    const identity = declared.backend === "identity";
    const bytes = identity ? new Uint8Array() : await platform.readFile(`${entry.dir}/${version}/${declared.default_model_filename}`);
    const placements = instancePlacements(declared.instance_group, declared.accelerator);
    const threads = (key: string) => {
      const value = declared.parameters[key]?.string_value;
      return value === undefined ? undefined : Number(value);
    };
    const shared = {
      // Instances of one deployment run concurrently: give each its share of the cores.
      intraOpThreads: threads("intra_op_thread_count") ?? Math.max(1, Math.floor(platform.cpuCount() / placements.length)),
      interOpThreads: threads("inter_op_thread_count"),
      graphLevel: declared.optimization.graph.level,
      allowSpinning: ["1", "true"].includes(declared.parameters.allow_spinning?.string_value ?? ""),
      signature: identity ? identitySignature(declared) : undefined,
      log: {
        info: (m: string) => platform.log.info(`${entry.name} v${version}: ${m}`),
        warn: (m: string) => platform.log.warn(`${entry.name} v${version}: ${m}`),
      },
    };
    const sessions: Session[] = [];
    let config: FunctionConfig;
    try {
      // Complete the config from the first instance, so a contradiction fails before the others load.
      sessions.push(await backend.load(bytes, { ...shared, ...placements[0]! }));
      config = identity ? completeIdentityConfig(declared) : completeConfig(declared, sessions[0]!.signature);
      for (const placement of placements.slice(1)) sessions.push(await backend.load(bytes, { ...shared, ...placement }));
    } catch (error) {
      await Promise.all(sessions.map((s) => s.release()));
      throw error;
    }
    return new Deployment({ config, version, sessions, backend, clock });
  }
}
