// tensorfn packed from this checkout, as npm would publish it: what the package and image tests install.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Runs a command to completion; throws with its output when it fails. */
export function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...process.env, CI: "true", NO_COLOR: "1", ...env } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout + result.stderr;
}

/** Packs the checkout into a new temporary folder; answers the folder and the tarball's path. */
export function packCheckout(): { dir: string; tarball: string } {
  const dir = mkdtempSync(join(tmpdir(), "tensorfn-pack-"));
  // prepack's work, run here: `npm pack` would also run prepare, rebuilding the example models other tests read.
  run(process.execPath, [join(ROOT, "deploy/npm/build-dist.mjs")], ROOT);
  run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], ROOT);
  return { dir, tarball: join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz"))!) };
}
