// Builds the optional native addon during `npm ci`: it returns freed memory to the OS after a
// function parks, and reads GPUs through NVML; without it tensorfn serves the same (without GPU
// figures), so a failed build is reported, never fatal.
import { spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const dir = dirname(fileURLToPath(import.meta.url));
const run = spawnSync("node-gyp", ["rebuild", "--directory", dir, "--loglevel", "error"], { stdio: ["ignore", "ignore", "pipe"], shell: false });
if (run.status === 0) console.log("native: built tensorfn_native (memory trimming after parks, model loads without a copy, GPU telemetry through NVML)");
else console.log(`native: addon not built (${run.error?.message ?? run.stderr.toString().trim().split("\n").at(-1)}); parked memory is released to the OS less eagerly, and no GPU telemetry`);
