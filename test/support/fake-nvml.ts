import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requireTool } from "./require-tool.ts";

/** Builds test/support/fake-nvml.c as `<dir>/libnvidia-ml.so.1` and answers `<dir>` (for LD_LIBRARY_PATH). */
export function buildFakeNvml(): string {
  requireTool("cc");
  const dir = mkdtempSync(join(tmpdir(), "tensorfn-fake-nvml-"));
  execFileSync("cc", ["-shared", "-fPIC", "-O1", "-o", join(dir, "libnvidia-ml.so.1"), join(import.meta.dirname, "fake-nvml.c")]);
  return dir;
}
