import { RuntimeError } from "../core/mod.ts";
import type { Platform } from "../core/mod.ts";
import { resolveInside } from "../config/mod.ts";

/**
 * Reads `relative` (e.g. "1/model.onnx") from a function's folder, only if its real path lies
 * inside that folder. Errors name the repository-relative path (`simple/1/model.onnx`), never an
 * absolute one, and say the same whether the file is missing, unreadable or outside.
 */
export async function readModelFile(platform: Platform, folder: string, name: string, relative: string): Promise<Uint8Array> {
  const shown = `${name}/${relative}`;
  const fail = () => new RuntimeError("INVALID_ARG", `model file ${shown} was not found inside the function's folder`);
  const path = await resolveInside(platform, folder, relative);
  if (path === undefined) throw fail();
  try {
    return await platform.readFile(path);
  } catch {
    throw fail();
  }
}
