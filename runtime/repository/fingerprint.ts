import type { Platform } from "../core/mod.ts";
import type { FunctionEntry } from "./scan-repository.ts";

/**
 * A cheap identity of a function's files (function.yaml and each version's model, by size and
 * modification time), so polling can tell which functions changed without reading them.
 */
export async function fingerprint(platform: Platform, entry: FunctionEntry, modelFile: string): Promise<string> {
  const paths = [entry.configFile ?? `${entry.dir}/function.yaml`, ...entry.versions.map((v) => `${entry.dir}/${v}/${modelFile}`)];
  const parts = await Promise.all(
    paths.map(async (path) => {
      const s = await platform.stat(path);
      return s ? `${path}:${s.size}:${s.mtimeMs}` : `${path}:-`;
    }),
  );
  return parts.join("|");
}
