/**
 * Silero VAD v5 as @ricky0123/vad-web ships it (MIT-licensed model by Silero Team, packaged under
 * ISC): `input` [batch, samples] FP32, `state` [2, batch, 128] FP32, `sr` INT64 scalar → `output`
 * [batch, 1], `stateN` [2, batch, 128]. Copied, unchanged, to functions/vad/1/model.onnx.
 */
import { copyFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Absolute path of the model inside the installed package. */
export function sileroSourcePath(): string {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  for (const base of [resolvedPackage(), join(root, "node_modules", "@ricky0123", "vad-web")]) {
    const path = base && join(base, "dist", "silero_vad_v5.onnx");
    if (path && existsSync(path)) return path;
  }
  throw new Error("Silero VAD model not found; is @ricky0123/vad-web installed (a devDependency)?");
}

function resolvedPackage(): string | undefined {
  try {
    return dirname(dirname(createRequire(import.meta.url).resolve("@ricky0123/vad-web")));
  } catch {
    return undefined;
  }
}

/** A writer that copies the model to the path it is given. */
export function copySilero(): (target: string) => Promise<void> {
  return (target) => copyFile(sileroSourcePath(), target);
}
