/** Unsent answer bytes a connection must have held for its end to ask for a collection. */
export const RELEASED_BYTES = 2 ** 20;

/**
 * A full garbage collection soon after a connection that held answers unsent is gone. What it held
 * is garbage then, but Bun's collector did not count those buffers as pressure and left them for
 * good in a busy server: +100 MB a round of clients that never read (grpc-connections and
 * connections tests, Bun 1.x, a loaded machine), all of it freed by one full collection. It runs
 * `delayMs` after the last of a burst of releases (the connections one sweep drops close one by
 * one), never more than `everyMs` after the burst's first, and at most once every `everyMs`; a
 * no-op where the platform cannot collect.
 */
export function collectAfterRelease(collect: (() => void) | undefined, { delayMs = 100, everyMs = 2000 } = {}): () => void {
  if (!collect) return () => {};
  let timer: ReturnType<typeof setTimeout> | undefined;
  let burstStart = 0;
  let last = -Infinity;
  const run = () => {
    timer = undefined;
    last = performance.now();
    collect();
  };
  return () => {
    const now = performance.now();
    // A burst that goes on (a client dropped again and again) does not put its collection off for good.
    if (timer !== undefined && now - burstStart >= everyMs) return;
    if (timer === undefined) burstStart = now;
    else clearTimeout(timer);
    timer = setTimeout(run, Math.max(delayMs, last + everyMs - now));
    (timer as { unref?: () => void }).unref?.();
  };
}
