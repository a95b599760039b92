// Preloaded into the server (node --import ./bench/studies/memory-probe.mjs) by bench/studies/memory-growth.ts:
// appends one JSON line per interval to $TENSORFN_MEMORY_PROBE with the main isolate's memory, so
// JS heap growth can be told apart from native growth (ORT, glibc malloc, worker threads) in RSS.
// With --expose-gc and TENSORFN_MEMORY_PROBE_GC=1 it forces a full GC first: heapUsed is then live data.
import { appendFileSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

const file = process.env.TENSORFN_MEMORY_PROBE;
if (file && isMainThread) {
  const forceGc = process.env.TENSORFN_MEMORY_PROBE_GC === "1" && typeof globalThis.gc === "function";
  const every = Number(process.env.TENSORFN_MEMORY_PROBE_MS ?? 2000);
  const started = Date.now();
  setInterval(() => {
    if (forceGc) globalThis.gc();
    const m = process.memoryUsage();
    appendFileSync(file, `${JSON.stringify({ t: (Date.now() - started) / 1000, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, gc: forceGc })}\n`);
  }, every).unref();
}
