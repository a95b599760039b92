// The processes a function process started, found where Linux lists them, so that what a handler
// spawned goes with it: a `sleep` it started, plain or detached, outlived the function process's
// crash, its unload and the server's exit (reparented to pid 1).
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";

/** When `pid` started (field 22 of /proc/<pid>/stat), against pid reuse; undefined when it is gone or a zombie. */
function startOf(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "latin1");
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** The direct children of `pid`, from every one of its threads (a worker thread's spawn is its thread's child). */
function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const task of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "latin1").split(" ")) if (child) children.push(Number(child));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return children;
}

/**
 * Every process that descends from `root`, with when each started: read from /proc/<pid>/task/*
 * /children (a walk of the tree alone, not of every process), empty where there is none. A process
 * that left root's tree (its parent died: it is init's now) can only be known from before, hence
 * `remembered`: the descendants found earlier that are still the same processes are kept.
 */
export function processTree(root: number, remembered: ReadonlyMap<number, string> = new Map()): Map<number, string> {
  const tree = new Map<number, string>();
  for (const [pid, start] of remembered) if (startOf(pid) === start) tree.set(pid, start);
  const queue = [root];
  while (queue.length > 0) {
    for (const child of childrenOf(queue.shift()!)) {
      if (tree.has(child) && !remembered.has(child)) continue;
      const start = startOf(child);
      if (start === undefined) continue;
      tree.set(child, start);
      queue.push(child);
    }
  }
  return tree;
}

/**
 * SIGKILLs every process of `tree` that is still the one found (same start), and with `group`
 * root's process group (root leads one of its own: what it started and did not move elsewhere).
 */
export function killTree(root: number, tree: ReadonlyMap<number, string>, { group = true } = {}): void {
  if (group) {
    try {
      process.kill(-root, "SIGKILL");
    } catch {
      // No such group left.
    }
  }
  for (const [pid, start] of tree) {
    if (pid === process.pid || startOf(pid) !== start) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
}
