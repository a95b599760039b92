/**
 * A full garbage collection soon after a connection that held answers unsent is gone. What it held
 * is garbage then, but Bun's collector did not count those buffers as pressure and left them for
 * good in a busy server: +100 MB a round of clients that never read (grpc-connections and
 * connections tests, Bun 1.x, a loaded machine), all of it freed by one full collection. At most one
 * every `everyMs` however many leave, `delayMs` after the first so the close's own frees come first;
 * a no-op where the platform cannot collect.
 */
export function collectAfterRelease(collect: (() => void) | undefined, { delayMs = 100, everyMs = 2000 } = {}): () => void {
  if (!collect) return () => {};
  let due = false;
  let last = -Infinity;
  return () => {
    if (due) return;
    due = true;
    const wait = Math.max(delayMs, last + everyMs - performance.now());
    setTimeout(() => {
      due = false;
      last = performance.now();
      collect();
    }, wait).unref();
  };
}
