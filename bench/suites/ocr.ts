/**
 * `npm run bench:ocr`: the OCR example (functions/ocr: a handler calling ocr_det, ocr_cls and
 * ocr_rec through their own queues and batchers) against the same steps written as a plain
 * script (bench/suites/scenarios/ocr-script-server.ts: node:http, three onnxruntime sessions called in
 * sequence per request; the pre- and post-processing is the same module). One PNG of three text
 * lines, POSTed as image/png; c=1 and c=16, three interleaved rounds, each row its median round.
 * Writes bench/results/ocr.md. Issue 12's targets: c=1 p50 ≤ 1.1× the script,
 * c=16 throughput ≥ 1.5× the script.
 *
 *   npm run bench:ocr [-- --quick]
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { encode } from "fast-png";
import * as ort from "onnxruntime-node";
import { drawPage } from "../../models/text-image.ts";
import { TENSORS } from "../../functions/ocr/ppocr.ts";
import { encodeBinaryTensor } from "../../runtime/tensor/mod.ts";
import { measureStep } from "./scenarios/measure-step.ts";
import type { Measured } from "./scenarios/measure-step.ts";
import type { EncodedRequest } from "../../adapters/bench/request-body.ts";
import { spawnServer } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";
import { writeResultsSection } from "./results-section.ts";
import { median, medianRound } from "./median-round.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ROUNDS = 3;
const LEVELS = [1, 16];
const LINES = ["PRICE 42", "HELLO WORLD", "BATCH 17"];
const { values } = parseArgs({ options: { quick: { type: "boolean", default: false } } });
const scale = values.quick ? 0.25 : 1;
const log = (line: string) => void process.stderr.write(`${line}\n`);

const page = drawPage(LINES, { scale: 3, margin: 32, lineGap: 12, spaceWidth: 2 });
const png = new Uint8Array(encode({ width: page.width, height: page.height, data: page.data, channels: 3, depth: 8 }));
const request: EncodedRequest = { body: png, headers: { "content-type": "image/png" }, inputs: [] };
// The same PNG to ocr_ensemble over KServe: one BYTES element in the binary tensor extension.
const imageSection = encodeBinaryTensor({ datatype: "BYTES", shape: [1], data: [png] });
const ensembleHeader = new TextEncoder().encode(JSON.stringify({ inputs: [{ name: "image", datatype: "BYTES", shape: [1], parameters: { binary_data_size: imageSection.length } }] }));
const ensembleBody = new Uint8Array(ensembleHeader.length + imageSection.length);
ensembleBody.set(ensembleHeader);
ensembleBody.set(imageSection, ensembleHeader.length);
const ensembleRequest: EncodedRequest = { body: ensembleBody, headers: { "inference-header-content-length": String(ensembleHeader.length) }, inputs: [] };

interface Row {
  label: string;
  concurrency: number;
  rounds: Measured[];
  recRows?: number;
}
// How large a recogniser batch pays on this machine: its raw CPU time per line of the page's width
// (480), in batches of 1 to 16, in this process before any server starts, as each of ocr_rec's
// instances runs it (one intra-op thread on 2 cores, no spinning), fetching what the OCR functions
// read (the likeliest class per step and its probability). ocr_rec's max_batch_size follows from it.
const REC_WIDTH = 480;
const perRow: { batch: number; ms: number }[] = [];
{
  const session = await ort.InferenceSession.create(join(ROOT, "functions", "ocr_rec", "1", "model.onnx"), { intraOpNumThreads: 1, interOpNumThreads: 1, extra: { session: { intra_op: { allow_spinning: "0" } } } });
  const fetch = [TENSORS.rec.index, TENSORS.rec.prob];
  for (const batch of [1, 3, 4, 8, 16]) {
    const x = new ort.Tensor("float32", new Float32Array(batch * 3 * 48 * REC_WIDTH).fill(0.5), [batch, 3, 48, REC_WIDTH]);
    await session.run({ x }, fetch);
    const runs = Math.max(3, Math.round(24 / batch));
    const started = process.cpuUsage();
    for (let i = 0; i < runs; i++) await session.run({ x }, fetch);
    const used = process.cpuUsage(started);
    perRow.push({ batch, ms: (used.user + used.system) / 1000 / runs / batch });
    log(`ocr_rec raw: batch ${batch}: ${perRow.at(-1)!.ms.toFixed(1)} ms of CPU per line`);
  }
  await session.release();
}

const servers: SpawnedServer[] = [];
const rows: Row[] = [];
try {
  const models = ["ocr", "ocr_ensemble", "ocr_det", "ocr_cls", "ocr_rec"].flatMap((m) => ["--load-model", m]);
  const tensorfn = await spawnServer("node", [join(ROOT, "adapters", "node", "bin.mjs"), "serve", "--repo", join(ROOT, "functions"), "--model-control-mode", "explicit", ...models, "--port", "0"]);
  servers.push(tensorfn);
  const script = await spawnServer("node", ["--import", "tsx", join(ROOT, "bench", "suites", "scenarios", "ocr-script-server.ts"), "--port", "0"]);
  servers.push(script);
  // Both read the page right before anything is timed.
  for (const s of [tensorfn, script]) {
    const path = s === tensorfn ? "/v1/functions/ocr" : "/";
    const answer = (await (await fetch(s.url + path, { method: "POST", body: png, headers: request.headers })).json()) as { lines?: { text: string }[] };
    const read = answer.lines?.map((l) => l.text).join(" | ");
    if (read !== LINES.join(" | ")) throw new Error(`${s.url} read ${JSON.stringify(read)}, not ${JSON.stringify(LINES.join(" | "))}`);
  }
  {
    const response = await fetch(`${tensorfn.url}/v2/models/ocr_ensemble/infer`, { method: "POST", body: ensembleBody, headers: ensembleRequest.headers });
    const text = ((await response.json()) as { outputs?: { name: string; data: string[] }[] }).outputs?.find((o) => o.name === "text")?.data.join(" | ");
    if (text !== LINES.join(" | ")) throw new Error(`ocr_ensemble read ${JSON.stringify(text)}, not ${JSON.stringify(LINES.join(" | "))}`);
  }
  const subjects: { label: string; server: SpawnedServer; model: string; path: string | undefined; stats: boolean; request?: EncodedRequest }[] = [
    { label: "hand-written script (node:http, 3 sessions in sequence)", server: script, model: "ocr", path: "/", stats: false },
    { label: "tensorfn `ocr` (handler → ocr_det, ocr_cls, ocr_rec), POST /v1/functions/ocr", server: tensorfn, model: "ocr", path: "/v1/functions/ocr", stats: true },
    { label: "tensorfn `ocr_ensemble` (7 steps), KServe binary", server: tensorfn, model: "ocr_ensemble", path: undefined, stats: true, request: ensembleRequest },
  ];
  for (const concurrency of LEVELS) {
    const byLabel = new Map(subjects.map((s) => [s.label, [] as Measured[]]));
    const rec = new Map(subjects.map((s) => [s.label, { rows: 0, executions: 0 }]));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of subjects) {
        const recBefore = await recStats(tensorfn.url);
        const m = await measureStep(
          { target: s.label, url: s.server.url, model: s.model, path: s.path, pid: s.server.pid, stats: s.stats, concurrency, warmupMs: 1000 * scale, durationMs: 4000 * scale, encoding: "binary" },
          s.request ?? request,
        );
        if (m.errors > 0) throw new Error(`${s.label}: ${m.errors} errors (${m.firstError})`);
        byLabel.get(s.label)!.push(m);
        log(`ocr c=${concurrency} round ${round}: ${s.label}: ${m.inferPerS.toFixed(1)} req/s, p50 ${m.latencyMs?.p50.toFixed(1)} ms`);
        if (s.server === tensorfn) {
          // The recogniser's rows per execution over this window (its warm-up included).
          const after = await recStats(tensorfn.url);
          const sum = rec.get(s.label)!;
          sum.rows += after.inference_count - recBefore.inference_count;
          sum.executions += after.execution_count - recBefore.execution_count;
        }
      }
    }
    for (const s of subjects) {
      const r = rec.get(s.label)!;
      rows.push({ label: s.label, concurrency, rounds: byLabel.get(s.label)!, recRows: s.server === tensorfn ? r.rows / Math.max(1, r.executions) : undefined });
    }
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
}

async function recStats(url: string): Promise<{ inference_count: number; execution_count: number }> {
  return ((await (await fetch(`${url}/v2/models/ocr_rec/stats`)).json()) as { model_stats: { inference_count: number; execution_count: number }[] }).model_stats[0]!;
}

const mid = (r: Row) => medianRound(r.rounds);
const lines = [
  "## OCR pipeline: tensorfn's `ocr` function against the same steps as a hand-written script",
  "",
  "Generated by `npm run bench:ocr` (bench/suites/ocr.ts); rerun to refresh. One PNG of three text lines (" + `${page.width}×${page.height}, ${png.length} bytes` + "), POSTed as",
  "image/png. tensorfn: `serve --model-control-mode explicit` with ocr, ocr_det, ocr_cls, ocr_rec loaded (as bundled in",
  "functions/). The script: bench/suites/scenarios/ocr-script-server.ts, node:http with the three sessions in-process, called in",
  `sequence per request; both use functions/ocr/ppocr.ts for everything around the models. ${ROUNDS} interleaved rounds of`,
  "1 s warm-up and a 4 s window per level, each row its median round. Client and servers share the 2 cores; `server cores`",
  "is the server process (all threads).",
  "",
  `- Date: ${new Date().toISOString()}`,
  "",
  "| c | server | req/s (median round) | rounds, req/s | p50 ms | p99 ms | server cores | ocr_rec rows per execution |",
  "|---:|---|---:|---|---:|---:|---:|---:|",
];
for (const r of rows) {
  const m = mid(r);
  lines.push(
    `| ${r.concurrency} | ${r.label} | ${m.inferPerS.toFixed(1)} | ${r.rounds.map((x) => x.inferPerS.toFixed(1)).join(" / ")} | ${m.latencyMs?.p50.toFixed(1)} | ${m.latencyMs?.p99.toFixed(1)} | ${m.cores.server === null ? "n/a" : m.cores.server.toFixed(2)} | ${r.recRows === undefined ? "" : r.recRows.toFixed(2)} |`,
  );
}
const find = (c: number, label: string) => rows.find((r) => r.concurrency === c && r.label.startsWith(label))!;
const p50 = (r: Row) => median(r.rounds.map((m) => m.latencyMs?.p50 ?? NaN));
const SCRIPT = "hand-written";
const latency = p50(find(1, "tensorfn `ocr`")) / p50(find(1, SCRIPT));
const throughput = mid(find(16, "tensorfn `ocr`")).inferPerS / mid(find(16, SCRIPT)).inferPerS;
const ensembleLatency = p50(find(1, "tensorfn `ocr_ensemble`")) / p50(find(1, SCRIPT));
const ensembleThroughput = mid(find(16, "tensorfn `ocr_ensemble`")).inferPerS / mid(find(16, SCRIPT)).inferPerS;
lines.push(
  "",
  `- ocr_rec's raw CPU time per line (${REC_WIDTH} wide, in-process, one thread as each instance runs it): ${perRow.map((r) => `${r.ms.toFixed(1)} ms ${r.batch === 1 ? "alone" : `in a batch of ${r.batch}`}`).join(", ")}. On a CPU a batch saves calls, not compute: a line costs about as much in a small batch as alone, and more in a large one (cache), so functions/ocr_rec takes at most 4.`,
  `- c=1 p50: tensorfn ${latency.toFixed(2)}× the script (target ≤ 1.1×: ${latency <= 1.1 ? "met" : "missed"}).`,
  `- c=16 throughput: tensorfn ${throughput.toFixed(2)}× the script (target ≥ 1.5×: ${throughput >= 1.5 ? "met" : "missed"}).`,
  `- ocr_ensemble (the same chain as 7 ensemble steps over KServe): c=1 p50 ${ensembleLatency.toFixed(2)}×, c=16 throughput ${ensembleThroughput.toFixed(2)}× the script.`,
  "",
);
if (values.quick) log(lines.join("\n"));
else writeResultsSection("ocr", lines.join("\n"));
log(values.quick ? "bench:ocr --quick: printed, bench/results/ left alone" : "bench:ocr: wrote bench/results/ocr.md");
