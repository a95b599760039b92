// How many files this process may have open (RLIMIT_NOFILE's soft limit), read where the kernel
// says it (Linux's /proc/self/limits): Node, Bun and Deno expose no getrlimit of their own.
import { readFileSync } from "node:fs";

/** The soft limit on open files, or undefined where it cannot be read (not Linux) or is unlimited. */
export function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1];
    return line === undefined || line === "unlimited" ? undefined : Number(line);
  } catch {
    return undefined;
  }
}

/** Descriptors kept for what is not a client connection: models and files read, worker threads, processes, the metrics port. */
export const RESERVED_DESCRIPTORS = 256;

/**
 * The connection cap each of `ports` listening ports may use so that, all full at once (`extra`
 * more on each: HTTP's room for probes), they leave RESERVED_DESCRIPTORS free: 1,100 idle gRPC
 * connections under a limit of 1,024 left the HTTP port no descriptor to accept its health probes.
 * `requested` when it fits (or the limit is unknown); never below 16.
 */
export function connectionsThatFit(requested: number, ports: number, extra: number, limit = openFileLimit()): number {
  if (limit === undefined) return requested;
  const fit = Math.floor((limit - RESERVED_DESCRIPTORS) / ports) - extra;
  return Math.min(requested, Math.max(16, fit));
}
