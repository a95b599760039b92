import { fork, spawnSync } from "node:child_process";
import { closeSync, existsSync, readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import type { ProcessHandle, ProcessOptions } from "../runtime/mod.ts";
import { logEnv } from "./console-logger.ts";
import type { LogOptions } from "./console-logger.ts";
import { LANE_BYTES, LANE_ENV, LANE_READY, openLaneFile, tensorLane } from "./tensor-lane.ts";
import type { TensorLane } from "./tensor-lane.ts";
import { killTree, processTree } from "./process-tree.ts";

/** How often a process's resident memory is read against its cap. */
export const MEMORY_CHECK_MS = 200;
/** Every this many checks, the processes it started are looked for (processTree). */
const TREE_EVERY = 5;

const BOOTSTRAP = new URL("./node/process-bootstrap.mjs", import.meta.url);

/**
 * `Platform.startProcess` for Node, Bun and Deno alike (each implements node:child_process's fork
 * with an IPC channel and V8's serialization, so typed arrays cross as bytes): the runtime's
 * function process, in the server's runtime, with the function's environment. Its memory cap is
 * held by reading the child's resident set from /proc every MEMORY_CHECK_MS (Linux; elsewhere it
 * is not held, and the start says so once); under Node the JavaScript heap is capped too
 * (--max-old-space-size), so a runaway heap fails inside V8 before the whole cap is reached.
 */
export function startFunctionProcess(
  options: ProcessOptions,
  warn: (message: string) => void,
  { compiledEntry, log = {} }: { compiledEntry?: string; log?: LogOptions } = {},
): ProcessHandle {
  const cap = options.maxMemoryBytes;
  const isNode = !process.versions.bun && !("Deno" in globalThis);
  const execArgv = isNode && cap ? [`--max-old-space-size=${Math.max(16, Math.floor(cap / 2 ** 20))}`] : [];
  // Large tensors cross through a file in /dev/shm where there is one (tensor-lane.ts), handed over as fd 4.
  const laneFd = openLaneFile();
  // A NUMA node binds the process's memory from its first page: numactl runs the runtime (Node only).
  const numa = options.numaNode === undefined ? undefined : numaBinding(options.numaNode, isNode);
  if (numa?.note) warn(`${options.label}: ${numa.note}`);
  // The compiled entry (Node, from bin.mjs) while it exists; else the sources through the bootstrap.
  const child = fork(BOOTSTRAP.pathname, compiledEntry && existsSync(new URL(compiledEntry)) ? [compiledEntry] : [], {
    ...(numa?.numactl && { execPath: numa.numactl, execArgv: [`--membind=${options.numaNode}`, process.execPath, ...execArgv] }),
    // The server's --log-level and --log-format, for the lines the process writes itself.
    env: { ...process.env, ...options.env, TENSORFN_PROCESS_LABEL: options.label, ...logEnv(log), [LANE_ENV]: laneFd === undefined ? "" : String(LANE_BYTES) },
    ...(!numa?.numactl && { execArgv }),
    serialization: "advanced",
    // A process group and session of its own: what the function starts is found and killed with it.
    detached: true,
    stdio: laneFd === undefined ? ["ignore", "inherit", "inherit", "ipc"] : ["ignore", "inherit", "inherit", "ipc", laneFd],
  });
  const lane: TensorLane | undefined = laneFd === undefined ? undefined : tensorLane(laneFd, "server");
  // Placed tensors go out only once the process says it holds the lane; until then, and without one, inline.
  let laneOpen = false;
  const messageHandlers: ((message: unknown) => void)[] = [];
  child.on("message", (message) => {
    if (message === LANE_READY) return void (laneOpen = lane !== undefined);
    let unpacked: unknown = message;
    try {
      if (lane) unpacked = lane.unpack(message);
    } catch (error) {
      // Only a process gone wrong sends one: it goes, as for any crash, and the server stays.
      return kill(`sent ${(error as Error).message}: killed`);
    }
    for (const handler of messageHandlers) handler(unpacked);
  });
  let reason: string | undefined;
  let exited = false;
  // The processes it started, as last seen (processTree): once it is gone, its orphans are found by these.
  let tree = new Map<number, string>();
  const exitHandlers: ((reason: string) => void)[] = [];
  const finish = (why: string) => {
    if (exited) return;
    exited = true;
    clearInterval(watch);
    // Whatever it started goes with it (a crash, a kill, its exit).
    if (child.pid !== undefined) killTree(child.pid, processTree(child.pid, tree));
    if (laneFd !== undefined) closeSync(laneFd);
    for (const handler of exitHandlers) handler(reason ?? why);
  };
  child.on("exit", (code, signal) => finish(signal ? `was killed by ${signal}` : `exited with code ${code}`));
  child.on("error", (error) => finish(`failed: ${error.message}`));
  const statusFile = `/proc/${child.pid}/status`;
  let warned = false;
  let ticks = 0;
  const watch = setInterval(() => {
    if (child.pid === undefined) return;
    // Once a second, what it started: a detached grandchild is known by its parent only while that lives.
    if (++ticks % TREE_EVERY === 0) tree = processTree(child.pid, tree);
    if (!cap) return;
    let rss: number;
    try {
      rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(statusFile, "latin1"))?.[1] ?? NaN) * 1024;
    } catch {
      if (!warned && process.platform !== "linux") warn(`${options.label}: isolation.max_memory is held on Linux only`);
      warned = true;
      return;
    }
    if (rss > cap) kill(`exceeded its memory cap (resident ${Math.round(rss / 2 ** 20)} MiB > isolation.max_memory ${Math.round(cap / 2 ** 20)} MiB): killed`);
  }, MEMORY_CHECK_MS);
  watch.unref();
  const kill = (why: string) => {
    if (exited) return;
    reason ??= why;
    if (child.pid !== undefined) tree = processTree(child.pid, tree);
    child.kill("SIGKILL");
    if (child.pid !== undefined) killTree(child.pid, tree);
  };
  const pinning = child.pid === undefined ? undefined : pin(child.pid, options);
  if (pinning) kill(pinning);
  return {
    pid: child.pid,
    postMessage: (message) => {
      if (!exited && child.connected) child.send((laneOpen ? lane!.pack(message) : message) as never);
    },
    onMessage: (handler) => void messageHandlers.push(handler),
    onExit: (handler) => void exitHandlers.push(handler),
    kill,
    terminate: async () => {
      if (exited) return;
      const gone = new Promise<void>((resolve) => exitHandlers.push(() => resolve()));
      kill("was stopped");
      await gone;
    },
  };
}

/**
 * How a process starts bound to NUMA node `node` (a host policy's `numa_node`): under `numactl
 * --membind`, so every page it allocates comes from that node, where numactl is installed and the
 * runtime is Node (Bun's and Deno's fork build their own command line). A note where it is not
 * applied, or where it changes nothing (a host with one node).
 */
function numaBinding(node: number, isNode: boolean): { numactl?: string; note?: string } {
  const nodes = numaNodes();
  if (nodes > 0 && node >= nodes) return { note: `host_policy numa_node ${node}: this host has node${nodes > 1 ? `s 0-${nodes - 1}` : " 0"} only: not applied` };
  if (!isNode) return { note: `host_policy numa_node ${node}: memory binding is applied under Node only: not applied` };
  const found = spawnSync("numactl", ["--show"], { encoding: "utf8" });
  if (found.error || found.status !== 0) return { note: `host_policy numa_node ${node}: numactl is not installed: memory not bound` };
  return { numactl: "numactl", ...(nodes <= 1 && { note: `host_policy numa_node ${node}: not applicable, this host has one NUMA node (bound to it, which changes nothing)` }) };
}

/**
 * Applies a host policy's cores to a process just forked, before it has loaded anything: every
 * thread it has is pinned (`taskset -a`), and the threads it starts later (onnxruntime's pools)
 * inherit that. Why, where the pinning failed.
 */
function pin(pid: number, options: ProcessOptions): string | undefined {
  if (options.cpuCores?.length) {
    const list = options.cpuCores.join(",");
    const run = spawnSync("taskset", ["-a", "-p", "-c", list, String(pid)], { encoding: "utf8" });
    if (run.error || run.status !== 0) {
      const why = run.error ? (run.error as NodeJS.ErrnoException).code === "ENOENT" ? "taskset (util-linux) is not installed" : run.error.message : run.stderr.trim();
      return `could not be pinned to cores ${list} (host_policy cpu_cores): ${why}`;
    }
  }
  return undefined;
}

/** NUMA nodes the kernel reports (0 where it reports none). */
function numaNodes(): number {
  try {
    return readdirSync("/sys/devices/system/node").filter((n) => /^node\d+$/.test(n)).length;
  } catch {
    return 0;
  }
}
