// --write-timeout, as the HTTP and the gRPC port both hold it: a connection's unsent answer bytes are
// looked at once a sweep; a client that reads slowly keeps its connection (what waits shrinks), one
// that stops reading loses it, and what it held with it.

/** How often the ports' sweeps look at every connection (write and request deadlines, idleness). */
export const CHECK_INTERVAL_MS = 1000;

/** A connection's answer bytes waiting at the last sweep, and since when none of them was taken. */
export interface Waiting {
  bytes: number;
  since: number;
}

/**
 * What waits after a sweep that found `bytes` unsent (`waiting` undefined: nothing), and, where
 * none of it was taken for over `timeoutMs`, why the connection is to be dropped (`stalled`).
 */
export function followOutput(last: Waiting | undefined, bytes: number, now: number, timeoutMs: number): { waiting?: Waiting; stalled?: string } {
  if (bytes === 0) return {};
  if (!last || bytes < last.bytes) return { waiting: { bytes, since: now } };
  if (now - last.since > timeoutMs) return { waiting: last, stalled: `${bytes} bytes of its answers untaken for ${Math.round((now - last.since) / 1000)} s (--write-timeout)` };
  return { waiting: { bytes, since: last.since } };
}
