import type { LoadLimits } from "./load-limits.ts";
import { lineOfPath, parseFunctionConfig } from "./parse-function-config.ts";
import type { ParseResult } from "./parse-function-config.ts";
import { parsePbtxtConfig, TRITON_CONFIG_FILE } from "./pbtxt-config.ts";
import { pbtxtLines } from "./_pbtxt-lines.ts";
import { ModelConfigSchema } from "./proto/model_config_pb.ts";

/** tensorfn's configuration file of a function folder. */
export const FUNCTION_FILE = "function.yaml";

export { TRITON_CONFIG_FILE };

/**
 * A function folder's configuration file among its file names: function.yaml, else Triton's
 * config.pbtxt (a folder that has both is being converted: function.yaml, `tensorfn convert`'s
 * output, wins), else none.
 */
export function configFileOf(names: readonly string[]): string | undefined {
  if (names.includes(FUNCTION_FILE)) return FUNCTION_FILE;
  if (names.includes(TRITON_CONFIG_FILE)) return TRITON_CONFIG_FILE;
  return undefined;
}

/** Reads a function's configuration file by its kind (its name): function.yaml or config.pbtxt. */
export function parseConfigFile(text: string, options: { file: string; name: string; limits?: LoadLimits; anyName?: boolean }): ParseResult & { ignored?: string[] } {
  return isPbtxt(options.file) ? parsePbtxtConfig(text, options) : parseFunctionConfig(text, options);
}

/** The line of `path` in a configuration file's text, either kind. */
export function lineInConfigFile(file: string, text: string, path: readonly PropertyKey[]): number {
  return isPbtxt(file) ? pbtxtLines(text, ModelConfigSchema)(path) : lineOfPath(text, path);
}

function isPbtxt(file: string): boolean {
  return file.endsWith(".pbtxt");
}
