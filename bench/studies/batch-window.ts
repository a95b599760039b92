/**
 * How precisely a batch window closes, per runtime: a plain setTimeout against the batcher's
 * PreciseTimer (timer for the bulk, MessageChannel polling for the tail), windows of 100–1000 µs,
 * interleaved round by round in one process. Reports lateness p50/p99 (µs after the deadline) and
 * the CPU used while a window is open (cores), plus CPU while idle (nothing pending). A first round
 * is run and not counted: a serving process is warm, and its first windows measure V8 compiling
 * these functions (a few hundred µs late each).
 *   npx tsx bench/studies/batch-window.ts | npx bun bench/studies/batch-window.ts | npx deno run -A bench/studies/batch-window.ts
 */
import { systemClock } from "../../runtime/core/clock.ts";
import { PreciseTimer } from "../../runtime/scheduler/dynamic/precise-timer.ts";
import { percentile } from "../../adapters/bench/percentiles.ts";

const WINDOWS_US = [100, 250, 500, 1000];
const ROUNDS = 5;
const PER_ROUND = 100;
const proc = (globalThis as { process?: { cpuUsage(): { user: number; system: number } } }).process;
const cpuUs = () => (proc ? proc.cpuUsage().user + proc.cpuUsage().system : NaN);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Strategy = (ms: number, fn: () => void) => void;
const precise = new PreciseTimer(systemClock);
const strategies: Record<string, Strategy> = {
  setTimeout: (ms, fn) => void setTimeout(fn, ms),
  precise: (ms, fn) => precise.set(performance.now() + ms, fn),
};

async function once(strategy: Strategy, ms: number): Promise<{ lateUs: number; cpuUs: number; wallUs: number }> {
  const c0 = cpuUs();
  const t0 = performance.now();
  const fired = await new Promise<number>((resolve) => strategy(ms, () => resolve(performance.now())));
  return { lateUs: (fired - t0 - ms) * 1000, cpuUs: cpuUs() - c0, wallUs: (fired - t0) * 1000 };
}

const samples = new Map<string, { late: number[]; cpu: number; wall: number }>();
for (let round = -1; round < ROUNDS; round++) {
  for (const windowUs of WINDOWS_US) {
    for (const name of Object.keys(strategies)) {
      const key = `${name} ${windowUs}`;
      const s = samples.get(key) ?? { late: [], cpu: 0, wall: 0 };
      if (round >= 0) samples.set(key, s); // round -1 warms up, uncounted
      for (let i = 0; i < PER_ROUND; i++) {
        const r = await once(strategies[name]!, windowUs / 1000);
        s.late.push(r.lateUs);
        s.cpu += r.cpuUs;
        s.wall += r.wallUs;
        await sleep(1); // idle between windows, as between bursts of requests
      }
    }
  }
}
const c0 = cpuUs();
await sleep(300);
const idleCores = (cpuUs() - c0) / 300_000;

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
console.log(`runtime ${runtime}; ${ROUNDS * PER_ROUND} windows per row; idle CPU (nothing pending) ${idleCores.toFixed(3)} cores`);
console.log("| strategy | window µs | late p50 µs | late p99 µs | CPU while open (cores) |");
console.log("|---|---:|---:|---:|---:|");
for (const [key, s] of samples) {
  const sorted = Float64Array.from(s.late).sort();
  const [name, windowUs] = key.split(" ");
  console.log(`| ${name} | ${windowUs} | ${percentile(sorted, 50)!.toFixed(0)} | ${percentile(sorted, 99)!.toFixed(0)} | ${(s.cpu / s.wall).toFixed(2)} |`);
}
