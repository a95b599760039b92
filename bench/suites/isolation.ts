/**
 * `npm run bench:isolation`: what `isolation: process` costs, as ratios to the same function in the
 * server's own process, measured in one run. One tensorfn process serves `simple` and `resnet`
 * (binary tensors) and `word_count` (a handler, JSON through POST /v1/functions) twice each: as
 * they are, and as copies with `isolation: process`. c=1 and c=32, the two forms interleaved over
 * three rounds of 0.5 s warm-up and a 2 s window, each row its median round. Then the restart: the
 * time from a crash of the isolated handler (an exit) to its next answer. Writes
 * bench/results/isolation.md.
 *
 *   npm run bench:isolation [-- --quick]
 */
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
// A handler that exits on request, for the restart's time.
mkdirSync(join(repo, "crashy", "1"), { recursive: true });
writeFileSync(join(repo, "crashy", "function.yaml"), "backend: handler\nhandler: handler.ts\nisolation: process\n");
writeFileSync(join(repo, "crashy", "handler.ts"), 'export function execute(requests: { text(): string }[]) { return requests.map((r) => (r.text() === "exit" ? process.exit(1) : { ok: true })); }\n');

const server = await spawnServer("node", [join(ROOT, "adapters/node/bin.mjs"), "serve", "--repo", repo, "--port", "0", "--model-control-mode", "none"], { timeoutMs: 120_000 });
const rows: { subject: string; form: "shared" | "process"; concurrency: number; rounds: Measured[] }[] = [];
const restarts: number[] = [];
try {
  const json = (body: unknown): EncodedRequest => ({ body: new TextEncoder().encode(JSON.stringify(body)), headers: { "content-type": "application/json" }, inputs: [] });
  // label, the function (its isolated copy is `<name>_process`), and for a function-style call its body.
  const subjects: [string, string, EncodedRequest?][] = [
    ["`simple` (16 INT32 + 16 INT32, binary)", "simple"],
    ["`resnet` (1×3×224×224 FP32, binary)", "resnet"],
    ["`word_count` handler, POST /v1/functions", "word_count", json({ text: "the quick brown fox jumps over the lazy dog" })],
  ];
  for (const concurrency of LEVELS) {
    for (const [label, name, body] of subjects) {
      const models = { shared: name, process: `${name}_process` };
      const requests = body ? { shared: body, process: body } : { shared: await benchRequest(server.url, name, { encoding: "binary" }), process: await benchRequest(server.url, models.process, { encoding: "binary" }) };
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
  `- Process ÷ shared throughput: ${summary.join("; ")}. The added p50 at c=1 is the round trip to the function's process (the request's tensors over the IPC channel, V8's serializer, and back).`,
  `- Restart after a crash (an exit), to the next answer: median ${median(restarts).toFixed(0)} ms (${restarts.map((r) => r.toFixed(0)).join(", ")} ms): a new process, the runtime's function-process modules and the handler imported again, after the backoff that doubles with each crash in a row (100 ms before the first restart here, 1.6 s before the fifth).`,
  "",
);
if (values.quick) log(lines.join("\n"));
else writeResultsSection("isolation", lines.join("\n"));
log(values.quick ? "bench:isolation --quick: printed, bench/results/ left alone" : "bench:isolation: wrote bench/results/isolation.md");
