import type { Platform } from "../core/mod.ts";
import { FUNCTION_FILE, TRITON_CONFIG_FILE } from "../config/mod.ts";
import type { FunctionEntry } from "./scan-repository.ts";

/**
 * A cheap identity of a function's files (function.yaml, each version's model and, for a function
 * with a handler, every file of its folder outside the version folders — the handler and whatever
 * it imports or reads from there — by size and modification time), so polling and `tensorfn dev`
 * can tell which functions changed without reading them.
 */
export async function fingerprint(platform: Platform, entry: FunctionEntry, modelFile: string, hasHandler = false): Promise<string> {
  const sources = hasHandler ? await folderFiles(platform, entry.dir) : [];
  const paths = [entry.configFile ?? `${entry.dir}/${FUNCTION_FILE}`, ...entry.versions.map((v) => `${entry.dir}/${v}/${modelFile}`), ...sources];
  const parts = await Promise.all(
    paths.map(async (path) => {
      const s = await platform.stat(path);
      return s ? `${path}:${s.size}:${s.mtimeMs}` : `${path}:-`;
    }),
  );
  return parts.join("|");
}

/** Bounds on the walk of a function's folder: a handler's own modules, not a vendored tree. */
const WALK = { depth: 4, files: 512 };

/** Files under `dir`, leaving out version folders (numbered), dot-entries and node_modules. */
async function folderFiles(platform: Platform, dir: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (path: string, depth: number): Promise<void> => {
    const children = await platform.readDir(path).catch(() => []);
    for (const child of children.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (files.length >= WALK.files) return;
      if (child.name.startsWith(".") || child.name === "node_modules" || child.name === FUNCTION_FILE || child.name === TRITON_CONFIG_FILE) continue;
      if (child.isFile) files.push(`${path}/${child.name}`);
      else if (child.isDirectory && depth < WALK.depth && !(depth === 0 && /^\d+$/.test(child.name))) await walk(`${path}/${child.name}`, depth + 1);
    }
  };
  await walk(dir, 0);
  return files;
}
