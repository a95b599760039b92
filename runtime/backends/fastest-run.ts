/**
 * How `execution_thread: auto` times a model, wherever it runs: one untimed run (onnxruntime sizes
 * its buffers on the first), then the fastest of `runs` in µs — noise only adds time. The worker
 * times its session with it, an inline session its own, and a backend with neither the event loop.
 */
export async function fastestRun(run: () => Promise<unknown>, runs: number): Promise<number> {
  await run();
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await run();
    best = Math.min(best, (performance.now() - start) * 1000);
  }
  return best;
}
