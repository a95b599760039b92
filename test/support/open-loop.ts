import { Pool } from "undici";

/** One answered (or failed) request of a load run. */
export interface Sample {
  /** ms since the run started, when the request was due (open loop) or sent (closed loop). */
  at: number;
  ms: number;
  status?: number;
  /** The `error` of a non-200 JSON answer. */
  error?: string;
  failure?: string;
}

export interface LoadRequest {
  path: string;
  body: string | Uint8Array;
  headers?: Record<string, string>;
}

async function send(pool: Pool, req: LoadRequest, timeoutMs: number): Promise<Omit<Sample, "at">> {
  const started = performance.now();
  try {
    const res = await pool.request({ method: "POST", path: req.path, body: req.body, headers: { host: "127.0.0.1", "content-type": "application/json", ...req.headers }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    if (res.statusCode === 200) {
      await res.body.dump();
      return { status: res.statusCode, ms: performance.now() - started };
    }
    const text = await res.body.text();
    let error: string | undefined;
    try {
      error = (JSON.parse(text) as { error?: string }).error;
    } catch {
      error = undefined;
    }
    return { status: res.statusCode, error, ms: performance.now() - started };
  } catch (error) {
    return { failure: (error as Error).message, ms: performance.now() - started };
  }
}

/** Closed loop: `clients` clients send back to back for `ms`; returns the answered requests per second. */
export async function measureCapacity(pool: Pool, req: LoadRequest, options: { clients: number; ms: number }): Promise<{ rps: number; samples: Sample[] }> {
  const samples: Sample[] = [];
  const started = performance.now();
  const end = started + options.ms;
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      while (performance.now() < end) samples.push({ at: performance.now() - started, ...(await send(pool, req, 30_000)) });
    }),
  );
  const ok = samples.filter((s) => s.status === 200).length;
  return { rps: ok / ((performance.now() - started) / 1000), samples };
}

/**
 * Open loop: `rate` requests per second for `ms`, each sent when due whatever the answers so far
 * (at most rate × ms requests in all), and waits for every answer. Latency counts from when a
 * request was due, so time spent waiting for a free client connection counts too.
 */
export async function openLoop(pool: Pool, req: LoadRequest, options: { rate: number; ms: number; timeoutMs: number }): Promise<Sample[]> {
  const total = Math.floor((options.rate * options.ms) / 1000);
  const interval = 1000 / options.rate;
  const started = performance.now();
  const pending: Promise<Sample>[] = [];
  for (let i = 0; i < total; i++) {
    const due = i * interval;
    const wait = due - (performance.now() - started);
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const dueAt = started + due;
    pending.push(send(pool, req, options.timeoutMs).then((s) => ({ ...s, at: due, ms: performance.now() - dueAt })));
  }
  return await Promise.all(pending);
}

/** The p-th percentile (0..100) of `values`, nearest rank; NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
