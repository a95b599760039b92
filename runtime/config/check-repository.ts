import type { Platform } from "../core/mod.ts";
import type { ConfigIssue } from "./config-issue.ts";
import { parseFunctionConfig } from "./parse-function-config.ts";

/** What checking a repository reads: a subset of `Platform`, so the real one can be passed. */
export type RepositoryReader = Pick<Platform, "readDir" | "readTextFile">;

/** The configuration file of a function folder. */
export const FUNCTION_FILE = "function.yaml";

/** Triton's version folder names: decimal, no leading 0 (others are ignored, not errors). */
const VERSION_FOLDER = /^[1-9][0-9]*$/;

/** Issues in one function.yaml's text (syntax, schema, cross-field rules); [] when it is valid. */
export function checkFunctionConfig(name: string, file: string, text: string): ConfigIssue[] {
  return parseFunctionConfig(text, { file, name }).errors;
}

/**
 * Checks a repository for `tensorfn check <dir>` without loading any model: every sub-folder (but
 * hidden ones) is a function; its function.yaml, when present, must parse (a folder without one is
 * valid: everything is completed from the model); it needs at least one numeric version folder, and
 * each version folder must hold the model file (`default_model_filename`; any entry of that name,
 * since ONNX models with external data may be a folder). Identity functions have no model file and
 * need only a version folder. Folder-level issues carry line 0, meaning "no line: the folder itself".
 * Model contents are not checked: the backend does that at load.
 */
export async function checkRepository(reader: RepositoryReader, dir: string): Promise<ConfigIssue[]> {
  let entries;
  try {
    entries = await reader.readDir(dir);
  } catch (cause) {
    return [{ file: dir, line: 0, field: "", problem: `cannot read the repository: ${(cause as Error).message}` }];
  }
  const functions = entries.filter((e) => e.isDirectory && !e.name.startsWith(".")).map((e) => e.name).sort();
  const issues: ConfigIssue[] = [];
  for (const name of functions) issues.push(...(await checkFunction(reader, `${dir}/${name}`, name)));
  return issues;
}

async function checkFunction(reader: RepositoryReader, folder: string, name: string): Promise<ConfigIssue[]> {
  const entries = await reader.readDir(folder);
  const issues: ConfigIssue[] = [];
  let modelFile = "model.onnx";
  let identity = false;
  if (entries.some((e) => e.isFile && e.name === FUNCTION_FILE)) {
    const file = `${folder}/${FUNCTION_FILE}`;
    const parsed = parseFunctionConfig(await reader.readTextFile(file), { file, name });
    issues.push(...parsed.errors);
    if (parsed.config) {
      modelFile = parsed.config.default_model_filename;
      identity = parsed.config.backend === "identity";
    }
  }
  const versions = entries.filter((e) => e.isDirectory && VERSION_FOLDER.test(e.name)).map((e) => e.name);
  versions.sort((a, b) => Number(a) - Number(b));
  if (versions.length === 0) {
    const problem = identity ? "no version folder (1/, 2/…)" : `no version folder with ${modelFile}`;
    return [...issues, { file: folder, line: 0, field: "version", problem }];
  }
  if (identity) return issues;
  for (const version of versions) {
    const inside = await reader.readDir(`${folder}/${version}`);
    if (!inside.some((e) => e.name === modelFile)) {
      issues.push({ file: `${folder}/${version}`, line: 0, field: "version", problem: `no ${modelFile} in version folder ${version}` });
    }
  }
  return issues;
}
