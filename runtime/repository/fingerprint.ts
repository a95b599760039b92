import type { Platform } from "../core/mod.ts";
import { FUNCTION_FILE } from "../config/mod.ts";
import type { FunctionEntry } from "./scan-repository.ts";

/**
 * A cheap identity of a function's files (function.yaml, each version's model, and `extra` files
 * of the function such as its handler, by size and modification time), so polling can tell which
 * functions changed without reading them.
 */
export async function fingerprint(platform: Platform, entry: FunctionEntry, modelFile: string, extra: readonly string[] = []): Promise<string> {
  const paths = [entry.configFile ?? `${entry.dir}/${FUNCTION_FILE}`, ...entry.versions.map((v) => `${entry.dir}/${v}/${modelFile}`), ...extra.map((f) => `${entry.dir}/${f}`)];
  const parts = await Promise.all(
    paths.map(async (path) => {
      const s = await platform.stat(path);
      return s ? `${path}:${s.size}:${s.mtimeMs}` : `${path}:-`;
    }),
  );
  return parts.join("|");
}
