import type { Platform } from "../core/mod.ts";
import { configFileOf, FUNCTION_NAME_RULE, functionNameProblem, MAX_VERSION, parseVersion, quoteName } from "../config/mod.ts";
import type { VersionPolicy } from "../config/function-config.ts";

/** One function folder as found on disk, before its configuration is parsed. */
export interface FunctionEntry {
  name: string;
  dir: string;
  /** Path of function.yaml, when the folder has one. */
  configFile?: string;
  /** Numeric version folders ≤ MAX_VERSION, ascending (Triton ignores non-numeric and 0-prefixed names). */
  versions: number[];
  /**
   * Registered from outside the repository (a model ModelMesh pulled): the folder is not named for
   * the function, and polls leave it alone.
   */
  external?: boolean;
  /** The model file of its one version, relative to `dir`, where it is not `<version>/<default_model_filename>`. */
  modelFile?: string;
}

export interface ScanOptions {
  /**
   * Messages already logged: a skipped folder is reported once, not on every poll (the dev server
   * scans every second). Owned by the caller so two servers in one process do not share it.
   */
  warned?: Set<string>;
}

/**
 * Lists the functions of a repository: every sub-folder is one function. Folders whose name breaks
 * the naming rule are skipped, and version folders above MAX_VERSION ignored, each with a warning
 * that quotes the name safely (a name may hold control characters).
 */
export async function scanRepository(platform: Platform, root: string, options: ScanOptions = {}): Promise<FunctionEntry[]> {
  const warn = (message: string) => {
    if (options.warned?.has(message)) return;
    options.warned?.add(message);
    platform.log.warn(message);
  };
  const entries = await platform.readDir(root);
  const functions: FunctionEntry[] = [];
  for (const entry of entries.filter((e) => e.isDirectory && !e.name.startsWith(".")).sort(byName)) {
    if (functionNameProblem(entry.name)) {
      warn(`repository: skipping folder ${quoteName(entry.name)}: ${FUNCTION_NAME_RULE}`);
      continue;
    }
    const dir = `${root}/${entry.name}`;
    const children = await platform.readDir(dir);
    const versions: number[] = [];
    for (const child of children.filter((c) => c.isDirectory)) {
      const version = parseVersion(child.name);
      if (version === "too-large") warn(`${entry.name}: ignoring version folder ${quoteName(child.name)}: versions go up to ${MAX_VERSION}`);
      else if (version !== undefined) versions.push(version);
    }
    versions.sort((a, b) => a - b);
    const config = configFileOf(children.filter((c) => c.isFile).map((c) => c.name));
    functions.push({ name: entry.name, dir, configFile: config ? `${dir}/${config}` : undefined, versions });
  }
  return functions;
}

/** The versions a policy serves out of those present, ascending. */
export function selectVersions(policy: VersionPolicy, available: readonly number[]): number[] {
  if ("all" in policy) return [...available];
  if ("specific" in policy) return available.filter((v) => policy.specific.versions.includes(v));
  return available.slice(-Math.max(1, policy.latest.num_versions));
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
