import { createRequire } from "node:module";
import type { GpuReadings } from "../runtime/core/platform.ts";

/** The native helpers, when the addon built (`npm ci` tries); otherwise undefined. */
export interface Native {
  /** Returns freed heap pages to the OS; true when any were released. */
  trimMemory(): boolean;
  /**
   * A plain ArrayBuffer over a Uint8Array's memory (shared memory included), without a copy; it
   * keeps the view alive. Undefined when it cannot make one (the caller copies then).
   */
  plainView(bytes: Uint8Array): ArrayBuffer | undefined;
  /** Every GPU and MIG device through NVML (loaded on the first call), or why not (src/nvml.c). */
  readGpus(): GpuReadings;
}

let loaded: Native | undefined | null = null;

/** Loads `native/build/Release/tensorfn_native.node` once; undefined if it was not built. */
export function loadNative(): Native | undefined {
  if (loaded !== null) return loaded;
  try {
    loaded = createRequire(import.meta.url)("./build/Release/tensorfn_native.node") as Native;
  } catch {
    loaded = undefined;
  }
  return loaded;
}

/** `Platform.readGpus` for every runtime that loads the addon (Node, Bun and Deno do). */
export function readGpus(): GpuReadings {
  const native = loadNative();
  if (!native) return { problem: "the native addon was not built (npm ci builds it where a C compiler is installed), so NVML cannot be read" };
  return native.readGpus();
}
