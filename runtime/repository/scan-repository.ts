import type { Platform } from "../core/mod.ts";
import type { VersionPolicy } from "../config/function-config.ts";

/** One function folder as found on disk, before its configuration is parsed. */
export interface FunctionEntry {
  name: string;
  dir: string;
  /** Path of function.yaml, when the folder has one. */
  configFile?: string;
  /** Numeric version folders, ascending (Triton ignores non-numeric and 0-prefixed names). */
  versions: number[];
}

export const CONFIG_FILE = "function.yaml";

/** Lists the functions of a repository: every sub-folder is one function. */
export async function scanRepository(platform: Platform, root: string): Promise<FunctionEntry[]> {
  const entries = await platform.readDir(root);
  const functions: FunctionEntry[] = [];
  for (const entry of entries.filter((e) => e.isDirectory && !e.name.startsWith(".")).sort(byName)) {
    const dir = `${root}/${entry.name}`;
    const children = await platform.readDir(dir);
    const versions = children
      .filter((c) => c.isDirectory && /^[1-9][0-9]*$/.test(c.name))
      .map((c) => Number(c.name))
      .sort((a, b) => a - b);
    const hasConfig = children.some((c) => c.isFile && c.name === CONFIG_FILE);
    functions.push({ name: entry.name, dir, configFile: hasConfig ? `${dir}/${CONFIG_FILE}` : undefined, versions });
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
