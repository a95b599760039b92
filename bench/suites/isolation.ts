/**
 * `npm run bench:isolation`: what `isolation: process` costs, as ratios to the same function in the
 * server's own process, measured in one run. One tensorfn process serves `simple` and `resnet`
 * (binary tensors) and `word_count` (a handler, JSON through POST /v1/functions) twice each: as
 * they are, and as copies with `isolation: process`. c=1 and c=32, the two forms interleaved over
 * three rounds of 0.5 s warm-up and a 2 s window, each row its median round. Then the restart: the
 * time from a crash of the isolated handler (an exit) to its next answer. Then the tensor lane: the
 * isolated `resnet` and `negate` (4 MB in, 4 MB out) against a second server started with
 * TENSORFN_TENSOR_LANE=off, whose tensors all cross the IPC channel. Writes bench/results/isolation.md.
 *
 *   npm run bench:isolation [-- --quick]
 */
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { NEGATE_CONFIG, buildNegate } from "../../models/negate.ts";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { benchRequest, measureStep } from "./scenarios/measure-step.ts";
import type { Measured } from "./scenarios/measure-step.ts";
import type { EncodedRequest } from "../../adapters/bench/request-body.ts";
import { spawnServer } from "../../harness/server-process.ts";
import { writeResultsSection } from "./results-section.ts";
import { median, medianRound } from "./median-round.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ROUNDS = 3;
const LEVELS = [1, 32];
const { values } = parseArgs({ options: { quick: { type: "boolean", default: false } } });
const scale = values.quick ? 0.25 : 1;
const log = (line: string) => void process.stderr.write(`${line}\n`);

const repo = mkdtempSync(join(tmpdir(), "tensorfn-bench-isolation-"));
for (const name of ["simple", "resnet", "word_count"]) {
  cpSync(join(ROOT, "functions", name), join(repo, name), { recursive: true });
  cpSync(join(ROOT, "functions", name), join(repo, `${name}_process`), { recursive: true });
  appendFileSync(join(repo, `${name}_process`, "function.yaml"), "\nisolation: process\n");
}
// Large tensors both ways: OUTPUT0 = -INPUT0, any length (the bench sends 1 M floats, 4 MB).
const NEGATE_ELEMENTS = 1_000_000;
const negate = buildNegate();
for (const [name, isolation] of [["negate", ""], ["negate_process", "isolation: process\n"]]) {
  mkdirSync(join(repo, name!, "1"), { recursive: true });
  writeFileSync(join(repo, name!, "1", "model.onnx"), negate);
  writeFileSync(join(repo, name!, "function.yaml"), `${NEGATE_CONFIG}${isolation}`);
}
// A handler that exits on request, for the restart's time.
mkdirSync(join(repo, "crashy", "1"), { recursive: true });
writeFileSync(join(repo, "crashy", "function.yaml"), "backend: handler\nhandler: handler.ts\nisolation: process\n");
writeFileSync(join(repo, "crashy", "handler.ts"), 'export function execute(requests: { text(): string }[]) { return requests.map((r) => (r.text() === "exit" ? process.exit(1) : { ok: true })); }\n');

const serve = (env: Record<string, string> = {}) =>
  spawnServer("node", [join(ROOT, "adapters/node/bin.mjs"), "serve", "--repo", repo, "--port", "0", "--model-control-mode", "none"], { timeoutMs: 120_000, env });
const server = await serve();
// The same functions, each isolated one's tensors over its IPC channel only.
const withoutLane = await serve({ TENSORFN_TENSOR_LANE: "off" });
const rows: { subject: string; form: "shared" | "process"; concurrency: number; rounds: Measured[] }[] = [];
const laneRows: { subject: string; concurrency: number; lane: Measured[]; ipc: Measured[] }[] = [];
const restarts: number[] = [];
try {
  const json = (body: unknown): EncodedRequest => ({ body: new TextEncoder().encode(JSON.stringify(body)), headers: { "content-type": "application/json" }, inputs: [] });
  // label, the function (its isolated copy is `<name>_process`), and for a function-style call its body.
  const subjects: [string, string, EncodedRequest?][] = [
    ["`simple` (16 INT32 + 16 INT32, binary)", "simple"],
    ["`resnet` (1×3×224×224 FP32, binary)", "resnet"],
    ["`word_count` handler, POST /v1/functions", "word_count", json({ text: "the quick brown fox jumps over the lazy dog" })],
    ["`negate` (1 M FP32 in and out, binary)", "negate"],
  ];
  const shapes = (name: string) => (name.startsWith("negate") ? { INPUT0: [NEGATE_ELEMENTS] } : undefined);
  for (const concurrency of LEVELS) {
    for (const [label, name, body] of subjects) {
      const models = { shared: name, process: `${name}_process` };
      const requests = body ? { shared: body, process: body } : { shared: await benchRequest(server.url, name, { encoding: "binary", shapes: shapes(name) }), process: await benchRequest(server.url, models.process, { encoding: "binary", shapes: shapes(name) }) };
      const measured: Record<"shared" | "process", Measured[]> = { shared: [], process: [] };
      for (let round = 1; round <= ROUNDS; round++) {
        for (const form of ["shared", "process"] as const) {
          const model = models[form];
          const m = await measureStep(
            { target: model, url: server.url, model, path: body ? `/v1/functions/${model}` : undefined, pid: server.pid, stats: true, concurrency, warmupMs: 500 * scale, durationMs: 2000 * scale, encoding: body ? "json" : "binary" },
            requests[form],
          );
          if (m.errors > 0) throw new Error(`${model}: ${m.errors} errors (${m.firstError})`);
          measured[form].push(m);
          log(`isolation c=${concurrency} round ${round}: ${model}: ${m.inferPerS.toFixed(0)} req/s, p50 ${m.latencyMs?.p50.toFixed(3)} ms`);
        }
      }
      rows.push({ subject: label, form: "shared", concurrency, rounds: measured.shared }, { subject: label, form: "process", concurrency, rounds: measured.process });
    }
  }
  // The tensor lane: the isolated copies, on the server with it and on the one without.
  for (const concurrency of LEVELS) {
    for (const [label, name] of subjects.filter(([, n]) => n === "resnet" || n === "negate")) {
      const model = `${name}_process`;
      const request = await benchRequest(server.url, model, { encoding: "binary", shapes: shapes(name) });
      const measured = { lane: [] as Measured[], ipc: [] as Measured[] };
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [form, target] of [["lane", server], ["ipc", withoutLane]] as const) {
          const m = await measureStep({ target: model, url: target.url, model, pid: target.pid, stats: true, concurrency, warmupMs: 500 * scale, durationMs: 2000 * scale, encoding: "binary" }, request);
          if (m.errors > 0) throw new Error(`${model} (${form}): ${m.errors} errors (${m.firstError})`);
          measured[form].push(m);
          log(`tensor lane c=${concurrency} round ${round}: ${model} ${form}: ${m.inferPerS.toFixed(0)} req/s, p50 ${m.latencyMs?.p50.toFixed(3)} ms`);
        }
      }
      laneRows.push({ subject: label, concurrency, ...measured });
    }
  }
  // The restart: an exit, then requests until one is answered (each waits for the new process).
  for (let i = 0; i < 5 * (values.quick ? 0.4 : 1); i++) {
    await fetch(`${server.url}/v1/functions/crashy`, { method: "POST", body: "ok" });
    const crashed = await fetch(`${server.url}/v1/functions/crashy`, { method: "POST", body: "exit" });
    const at = performance.now();
    if (crashed.status !== 503) throw new Error(`a crash answered ${crashed.status}`);
    while ((await fetch(`${server.url}/v1/functions/crashy`, { method: "POST", body: "ok" })).status !== 200);
    restarts.push(performance.now() - at);
    await new Promise((r) => setTimeout(r, 200));
  }
} finally {
  await server.stop();
  await withoutLane.stop();
  rmSync(repo, { recursive: true, force: true });
}

const lines = [
  "## Isolation: a function in its own process against the server's",
  "",
  "Generated by `npm run bench:isolation` (bench/suites/isolation.ts); rerun to refresh. One tensorfn process",
  "(`serve --model-control-mode none`, Node) serving each function twice, as it is and as a copy with `isolation: process`;",
  `${ROUNDS} interleaved rounds of 0.5 s warm-up and a 2 s window per level, each row the median round. Client, server and`,
  "function processes share the 2 cores.",
  "",
  `- Date: ${new Date().toISOString()}`,
  "",
  "| c | function | shared req/s | process req/s | process ÷ shared | shared p50 ms | process p50 ms | + p50 µs |",
  "|---:|---|---:|---:|---:|---:|---:|---:|",
];
const summary: string[] = [];
for (let i = 0; i < rows.length; i += 2) {
  const shared = medianRound(rows[i]!.rounds);
  const isolated = medianRound(rows[i + 1]!.rounds);
  const ratio = isolated.inferPerS / shared.inferPerS;
  const p50 = (m: Measured) => m.latencyMs?.p50 ?? NaN;
  lines.push(
    `| ${rows[i]!.concurrency} | ${rows[i]!.subject} | ${shared.inferPerS.toFixed(0)} | ${isolated.inferPerS.toFixed(0)} | ${ratio.toFixed(2)} | ${p50(shared).toFixed(3)} | ${p50(isolated).toFixed(3)} | ${((p50(isolated) - p50(shared)) * 1000).toFixed(0)} |`,
  );
  summary.push(`${rows[i]!.subject.split(" ")[0]} c=${rows[i]!.concurrency}: ${ratio.toFixed(2)}×`);
}
lines.push(
  "",
  `- Process ÷ shared throughput: ${summary.join("; ")}. The added p50 at c=1 is the round trip to the function's process: the request's tensors through the tensor lane (or, under 32 KiB, the IPC channel), and back.`,
  "",
  "### The tensor lane",
  "",
  "The isolated copies above (their typed arrays of 32 KiB or more through a file in /dev/shm, their place over the IPC channel) against the",
  "same functions on a second server started with `TENSORFN_TENSOR_LANE=off` (every byte over the IPC channel, V8's serializer), same rounds.",
  "",
  "| c | function | lane req/s | IPC req/s | lane ÷ IPC | lane p50 ms | IPC p50 ms | lane p99 ms | IPC p99 ms |",
  "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
  ...laneRows.map((r) => {
    const [lane, ipc] = [medianRound(r.lane), medianRound(r.ipc)];
    const at = (m: Measured, q: "p50" | "p99") => (m.latencyMs?.[q] ?? NaN).toFixed(3);
    return `| ${r.concurrency} | ${r.subject} | ${lane.inferPerS.toFixed(0)} | ${ipc.inferPerS.toFixed(0)} | ${(lane.inferPerS / ipc.inferPerS).toFixed(2)} | ${at(lane, "p50")} | ${at(ipc, "p50")} | ${at(lane, "p99")} | ${at(ipc, "p99")} |`;
  }),
  "",
  `- Restart after a crash (an exit), to the next answer: median ${median(restarts).toFixed(0)} ms (${restarts.map((r) => r.toFixed(0)).join(", ")} ms): a new process, the runtime's function-process modules and the handler imported again, after the backoff that doubles with each crash in a row (100 ms before the first restart here, 1.6 s before the fifth).`,
  "",
);
if (values.quick) log(lines.join("\n"));
else writeResultsSection("isolation", lines.join("\n"));
log(values.quick ? "bench:isolation --quick: printed, bench/results/ left alone" : "bench:isolation: wrote bench/results/isolation.md");
