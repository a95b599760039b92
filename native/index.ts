import { createRequire } from "node:module";

/** The native helpers, when the addon built (`npm ci` tries); otherwise undefined. */
export interface Native {
  /** Returns freed heap pages to the OS; true when any were released. */
  trimMemory(): boolean;
  /**
   * A plain ArrayBuffer over a Uint8Array's memory (shared memory included), without a copy; it
   * keeps the view alive. Undefined when it cannot make one (the caller copies then).
   */
  plainView(bytes: Uint8Array): ArrayBuffer | undefined;
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
