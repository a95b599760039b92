// The dev server's file watcher: the repository folder and each function folder in it, each with a
// watcher of its own (inotify on Linux), not one recursive watch. Node emulates a recursive watch on
// Linux by statting every file it knows again on every event: 2000 version folders made at once
// blocked the event loop for 48 s (health probes timed out), 500 for 3 s. Changes deeper down (a
// model file replaced in its version folder, a handler's module in a subfolder) are left to the dev
// server's poll, once a second.
import { readdirSync, watch } from "node:fs";
import type { FSWatcher } from "node:fs";

/** Calls `onChange` when anything in `dir` or in one of its folders changes; returns a function that stops watching. */
export function watchRepositoryFolders(dir: string, onChange: () => void): () => void {
  const watchers = new Map<string, FSWatcher>();
  const add = (path: string, listener: () => void) => {
    if (watchers.has(path)) return;
    try {
      const watcher = watch(path, listener);
      watcher.on("error", () => {
        watcher.close();
        watchers.delete(path);
      });
      watchers.set(path, watcher);
    } catch {
      // Gone already, or not watchable: the poll sees it.
    }
  };
  // The function folders as they are now: one watcher each, added and dropped as they come and go.
  const sync = () => {
    let names: Set<string>;
    try {
      names = new Set(readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith(".")).map((e) => `${dir}/${e.name}`));
    } catch {
      return;
    }
    for (const [path, watcher] of watchers) {
      if (path !== dir && !names.has(path)) {
        watcher.close();
        watchers.delete(path);
      }
    }
    for (const path of names) add(path, onChange);
  };
  add(dir, () => {
    sync();
    onChange();
  });
  sync();
  return () => {
    for (const watcher of watchers.values()) watcher.close();
    watchers.clear();
  };
}
