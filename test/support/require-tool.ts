import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";

/** The external tools some tests drive, and the Debian package .ci/run installs for each. */
const TOOLS = {
  promtool: { probe: ["promtool", "--version"], debian: "prometheus" },
  prometheus: { probe: ["prometheus", "--version"], debian: "prometheus" },
  chromium: { path: "/usr/bin/chromium", debian: "chromium" },
  // The fake NVML library the GPU telemetry tests build (the native addon needs a compiler too).
  cc: { probe: ["cc", "--version"], debian: "gcc" },
  // A host policy's numa_node starts the process under numactl --membind.
  numactl: { probe: ["numactl", "--show"], debian: "numactl" },
} as const;

export type Tool = keyof typeof TOOLS;

/**
 * Throws, naming the tool and how to install it, when `tool` is missing: a test that needs a tool
 * fails without it instead of skipping, so a green run never hides what it did not check.
 */
export function requireTool(tool: Tool): void {
  const spec = TOOLS[tool];
  const found = "path" in spec ? existsSync(spec.path) : spawnSync(spec.probe[0], spec.probe.slice(1)).status === 0;
  if (found) return;
  const where = "path" in spec ? `at ${spec.path}` : "on the PATH";
  throw new Error(
    `${tool} is not ${where}: this test needs Debian's \`${spec.debian}\` package, which .ci/run installs ` +
      `(apt-get install -y --no-install-recommends ${spec.debian})`,
  );
}
