/**
 * `npm run bench:lifecycle`: cold starts and memory of the serverless lifecycle, measured in one
 * run, written to bench/out/lifecycle.json and into bench/results/lifecycle.md (the lifecycle
 * markers, leaving the rest of the file alone).
 *
 * - first response from PARKED and from disk, as ratios to the raw cost of creating the same
 *   onnxruntime session and running it once (targets ≤ 1.1× and ≤ 1.2×);
 * - RSS per parked model vs its file size (target ≤ 1.2×);
 * - start-up time and RSS with 200 registered functions in lazy mode (targets < 1 s, < 200 MB).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import { rawColdStart } from "./lifecycle/raw-cold-start.ts";
import { rssOf, servedColdStart } from "./lifecycle/served-cold-start.ts";
import { spawnServer } from "../../harness/server-process.ts";
import { writeResultsSection } from "./results-section.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FUNCTIONS = join(ROOT, "functions");
const BIN = join(ROOT, "adapters", "node", "bin.mjs");
const MODELS = ["simple", "mlp", "resnet"];
const REPS = 5;
const log = (line: string) => void process.stderr.write(`${line}\n`);

function repository(build: (dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "tensorfn-lifecycle-"));
  build(dir);
  return dir;
}

function copyFunction(dir: string, from: string, to: string, yaml?: string): void {
  cpSync(join(FUNCTIONS, from), join(dir, to), { recursive: true });
  if (yaml !== undefined) writeFileSync(join(dir, to, "function.yaml"), yaml);
}

const withPark = (name: string, park: "host" | "none") =>
  readFileSync(join(FUNCTIONS, name, "function.yaml"), "utf8") + `\nscale: { idle_timeout_ms: 0, park: ${park} }\n`;

// 1. Cold starts.
log("lifecycle: raw onnxruntime cold starts");
const raw: Record<string, Awaited<ReturnType<typeof rawColdStart>>> = {};
for (const m of MODELS) raw[m] = await rawColdStart(join(FUNCTIONS, m, "1", "model.onnx"), REPS);

log("lifecycle: served cold starts (from PARKED and from disk)");
const coldRepo = repository((dir) => {
  for (const m of MODELS) {
    copyFunction(dir, m, m, withPark(m, "host"));
    copyFunction(dir, m, `${m}_disk`, withPark(m, "none"));
  }
});
const cold = await spawnServer("node", [BIN, "serve", "--repo", coldRepo, "--port", "0"]);
const served: Record<string, { fromParkedMs: number; fromDiskMs: number }> = {};
try {
  for (const m of MODELS) served[m] = await servedColdStart(cold.url, m, REPS);
} finally {
  await cold.stop();
}

// 2. RSS per parked model: 8 copies of mlp, loaded then parked, against the same server with one
// parked copy. Twice: with glibc's default malloc arenas, and with MALLOC_ARENA_MAX=2.
log("lifecycle: RSS per parked model");
const COPIES = 8;
const parkRepo = repository((dir) => {
  for (let i = 0; i < COPIES; i++) copyFunction(dir, "mlp", `mlp_${i}`, withPark("mlp", "host"));
});
async function parkedRss(env: Record<string, string>) {
  const server = await spawnServer("node", [BIN, "serve", "--repo", parkRepo, "--port", "0"], { env });
  try {
    const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: new Array(512).fill(0) }] });
    const call = async (path: string, payload?: string) => {
      const res = await request(`${server.url}${path}`, { method: "POST", body: payload });
      await res.body.arrayBuffer();
    };
    await call("/v2/models/mlp_0/infer", body); // warm the shared pieces (worker pool, ORT) first
    await call("/v2/repository/models/mlp_0/park");
    const idle = rssOf(server.child.pid!);
    for (let i = 0; i < COPIES; i++) await call(`/v2/models/mlp_${i}/infer`, body);
    const ready = rssOf(server.child.pid!);
    for (let i = 0; i < COPIES; i++) await call(`/v2/repository/models/mlp_${i}/park`);
    return { idle, ready, parked: rssOf(server.child.pid!) };
  } finally {
    await server.stop();
  }
}
const rss = {
  fileBytes: raw.mlp!.fileBytes,
  copies: COPIES,
  glibcDefault: await parkedRss({}),
  arenaMax2: await parkedRss({ MALLOC_ARENA_MAX: "2" }),
};

// 3. Start-up with 200 registered functions in lazy mode.
log("lifecycle: start-up with 200 functions");
const manyRepo = repository((dir) => {
  for (let i = 0; i < 200; i++) copyFunction(dir, "simple", `fn_${String(i).padStart(3, "0")}`);
});
const startups: { ms: number; rss: number }[] = [];
for (let i = 0; i < 3; i++) {
  const started = performance.now();
  const server = await spawnServer("node", [BIN, "serve", "--repo", manyRepo, "--port", "0"]);
  const ms = performance.now() - started;
  const index = (await (await request(`${server.url}/v2/repository/index`, { method: "POST" })).body.json()) as unknown[];
  startups.push({ ms, rss: rssOf(server.child.pid!) });
  if (index.length !== 200) throw new Error(`expected 200 functions, got ${index.length}`);
  await server.stop();
}
const startup = startups.sort((a, b) => a.ms - b.ms)[1]!;

const results = { date: new Date().toISOString(), reps: REPS, raw, served, rss, startup };
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(join(ROOT, "bench", "out", "lifecycle.json"), JSON.stringify(results, null, 2));
writeResultsSection("lifecycle", render(results));
log("lifecycle: wrote bench/results/lifecycle.md and bench/out/lifecycle.json");
process.exit(0);

function render(r: typeof results): string {
  const ms = (v: number) => v.toFixed(1);
  const mib = (v: number) => (v / 1024 / 1024).toFixed(1);
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
  const rows = MODELS.map((m) => {
    const x = r.raw[m]!;
    const s = r.served[m]!;
    return `| ${m} | ${mib(x.fileBytes)} | ${ms(x.fromMemoryMs)} | ${ms(s.fromParkedMs)} | ${ratio(s.fromParkedMs, x.fromMemoryMs)}× | ${ms(x.fromDiskMs)} | ${ms(s.fromDiskMs)} | ${ratio(s.fromDiskMs, x.fromDiskMs)}× |`;
  });
  const per = (x: { idle: number; ready: number; parked: number }) => ({
    parked: (x.parked - x.idle) / r.rss.copies,
    ready: (x.ready - x.idle) / r.rss.copies,
  });
  const glibc = per(r.rss.glibcDefault);
  const arena = per(r.rss.arenaMax2);
  const big = MODELS.filter((m) => m !== "simple");
  const parkedOk = big.every((m) => r.served[m]!.fromParkedMs / r.raw[m]!.fromMemoryMs <= 1.1);
  const diskOk = big.every((m) => r.served[m]!.fromDiskMs / r.raw[m]!.fromDiskMs <= 1.2);
  return [
    "## Lifecycle: cold starts and memory",
    "",
    `Reproduce: \`npm run bench:lifecycle\` (${r.date}; medians of ${r.reps}; client, server and the raw measurement share the machine).`,
    "",
    "Raw = create the onnxruntime session with the server's options and run it once, in a process where onnxruntime is already loaded (from bytes in memory, and reading the file first). Served = the client-side time of the first request after `POST …/park` (PARKED: bytes kept) or with `park: none` (the file is read again), through HTTP, the queue and a worker thread.",
    "",
    "| model | file MiB | raw from memory ms | served from PARKED ms | ratio | raw from disk ms | served from disk ms | ratio |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    `- From PARKED ≤ 1.1× raw (mlp, resnet): ${verdict(parkedOk)}. From disk ≤ 1.2× raw (mlp, resnet): ${verdict(diskOk)}. For \`simple\` the raw cost is a few milliseconds, so the fixed cost of one HTTP request and a worker hop dominates its ratio.`,
    `- RSS per parked mlp (${r.rss.copies} copies, ${mib(r.rss.fileBytes)} MiB file, RSS growth over one parked copy ÷ ${r.rss.copies}): ${mib(glibc.parked)} MiB = ${ratio(glibc.parked, r.rss.fileBytes)}× the file with glibc's default arenas (target ≤ 1.2×: ${verdict(glibc.parked / r.rss.fileBytes <= 1.2)}); ${mib(arena.parked)} MiB = ${ratio(arena.parked, r.rss.fileBytes)}× with \`MALLOC_ARENA_MAX=2\`. READY each copy held ${mib(glibc.ready)} MiB (${mib(arena.ready)} MiB).`,
    `- Start-up with 200 registered functions in lazy mode: ${ms(r.startup.ms)} ms to the URL line (median of 3; includes Node's own start and loading tensorfn's compiled sources (bin.mjs); target < 1000 ms: ${verdict(r.startup.ms < 1000)}), RSS ${mib(r.startup.rss)} MiB (target < 200 MiB: ${verdict(r.startup.rss < 200 * 1024 * 1024)}).`,
    "",
  ].join("\n");
}
