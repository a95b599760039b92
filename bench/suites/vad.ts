/**
 * `npm run bench:vad`: the sequence batcher on the real Silero VAD v5 (functions/vad). N streams,
 * each a sequence of 512-sample frames sent one at a time over HTTP with the binary tensor
 * extension (its next frame once the last is answered), against the same frames run stream by
 * stream in this process on onnxruntime-node (batch 1, the state carried by hand): the script a
 * user would write. Then 128 streams paced in real time (a frame every 32 ms each): per-frame latency.
 * The ceilings the same run allows: the serving path alone (`simple`, 16 INT32, at 32 clients, the
 * same framing) and the model's compute batched 32 at a time in-process.
 * Streams restart as new sequences when their audio ends. Writes bench/results/vad.md.
 *
 *   npm run bench:vad [-- --quick]
 */
import { rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { Pool } from "undici";
import { spawnServer } from "../../harness/server-process.ts";
import { SR, speech } from "../../harness/speech-audio.ts";
import { writeBenchRepository } from "./scenarios/bench-repository.ts";
import { writeResultsSection } from "./results-section.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FRAME = 512;
const FRAME_MS = (FRAME / SR) * 1000;
const { values } = parseArgs({ options: { quick: { type: "boolean", default: false } } });
const WINDOW_MS = values.quick ? 1500 : 5000;
const log = (line: string) => void process.stderr.write(`${line}\n`);

/** One second of speech-like audio, as 31 frames (harness/speech-audio.ts). */
const FRAMES = Array.from({ length: Math.floor(SR / FRAME) }, (_, i) => speech(1, 1).subarray(i * FRAME, (i + 1) * FRAME));

/** A request body with the binary tensor extension: JSON header, then the frame's 2048 bytes. */
function body(id: number, index: number): { bytes: Uint8Array; headerLength: number } {
  const parameters = { sequence_id: id, ...(index === 0 && { sequence_start: true }), ...(index === FRAMES.length - 1 && { sequence_end: true }) };
  const header = new TextEncoder().encode(JSON.stringify({ parameters, inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME], parameters: { binary_data_size: FRAME * 4 } }] }));
  const bytes = new Uint8Array(header.length + FRAME * 4);
  bytes.set(header);
  bytes.set(new Uint8Array(FRAMES[index]!.buffer, FRAMES[index]!.byteOffset, FRAME * 4), header.length);
  return { bytes, headerLength: header.length };
}

/** Stream by stream in-process: frames per second of one loop over the frames, the state carried by hand. */
async function inProcess(): Promise<number> {
  const session = await ort.InferenceSession.create(join(ROOT, "functions", "vad", "1", "model.onnx"));
  const sr = new ort.Tensor("int64", BigInt64Array.of(16000n), []);
  let frames = 0;
  const end = performance.now() + WINDOW_MS;
  while (performance.now() < end) {
    let state = new Float32Array(256);
    for (const f of FRAMES) {
      const r = await session.run({ input: new ort.Tensor("float32", Float32Array.from(f), [1, FRAME]), state: new ort.Tensor("float32", state, [2, 1, 128]), sr });
      state = Float32Array.from(r.stateN!.data as Float32Array);
      frames++;
    }
  }
  await session.release();
  return (frames / WINDOW_MS) * 1000;
}

/** In-process, 32 streams' frames batched together: the compute ceiling of the batcher at 32. */
async function batchedInProcess(rows: number): Promise<number> {
  const session = await ort.InferenceSession.create(join(ROOT, "functions", "vad", "1", "model.onnx"));
  const sr = new ort.Tensor("int64", BigInt64Array.of(16000n), []);
  const input = new Float32Array(rows * FRAME);
  for (let r = 0; r < rows; r++) input.set(FRAMES[r % FRAMES.length]!, r * FRAME);
  let state = new Float32Array(2 * rows * 128);
  let frames = 0;
  const end = performance.now() + WINDOW_MS;
  while (performance.now() < end) {
    const r = await session.run({ input: new ort.Tensor("float32", input, [rows, FRAME]), state: new ort.Tensor("float32", state, [2, rows, 128]), sr });
    state = Float32Array.from(r.stateN!.data as Float32Array);
    frames += rows;
  }
  await session.release();
  return (frames / WINDOW_MS) * 1000;
}

/** The serving path alone: `simple` (16 INT32 in and out, binary) from `clients` closed-loop clients. */
async function servingPath(url: string, clients: number): Promise<number> {
  const header = new TextEncoder().encode(JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } })) }));
  const bytes = new Uint8Array(header.length + 128);
  bytes.set(header);
  const pool = new Pool(url, { connections: clients, pipelining: 1 });
  let answered = 0;
  const start = performance.now();
  const end = start + WINDOW_MS;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const r = await pool.request({ path: "/v2/models/simple/infer", method: "POST", body: bytes, headers: { "inference-header-content-length": String(header.length) } });
        await r.body.arrayBuffer();
        if (r.statusCode !== 200) throw new Error(`simple: ${r.statusCode}`);
        answered++;
      }
    }),
  );
  const elapsed = performance.now() - start;
  await pool.close();
  return (answered / elapsed) * 1000;
}

/** Each stream's bodies, encoded once (a stream restarts under the same id: its START ends the last one). */
const bodies = new Map<number, { bytes: Uint8Array; headerLength: number }[]>();
const streamBodies = (id: number) => {
  let list = bodies.get(id);
  if (!list) bodies.set(id, (list = FRAMES.map((_, i) => body(id, i))));
  return list;
};

/** `streams` sequences, each sending its next frame when the last is answered (or every 32 ms when `paced`). */
async function served(url: string, streams: number, paced: boolean): Promise<{ framesPerS: number; p50: number; p99: number; late: number }> {
  const pool = new Pool(url, { connections: streams, pipelining: 1 });
  const latencies: number[] = [];
  let late = 0;
  const start = performance.now();
  const end = start + WINDOW_MS;
  const stream = async (s: number) => {
    if (paced) await new Promise((r) => setTimeout(r, (s * FRAME_MS) / streams)); // staggered
    const list = streamBodies(s + 1 + (paced ? 1000 : 0));
    while (performance.now() < end) {
      for (let i = 0; i < FRAMES.length && performance.now() < end; i++) {
        const due = paced ? performance.now() + FRAME_MS : 0;
        const { bytes, headerLength } = list[i]!;
        const sent = performance.now();
        const r = await pool.request({ path: "/v2/models/vad/infer", method: "POST", body: bytes, headers: { "inference-header-content-length": String(headerLength) } });
        const answer = await r.body.arrayBuffer();
        if (r.statusCode !== 200) throw new Error(`stream ${s} frame ${i}: ${r.statusCode} ${new TextDecoder().decode(answer)}`);
        const took = performance.now() - sent;
        latencies.push(took);
        if (paced) {
          if (took > FRAME_MS) late++;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((res) => setTimeout(res, wait));
        }
      }
    }
  };
  await Promise.all(Array.from({ length: streams }, (_, s) => stream(s)));
  const elapsed = performance.now() - start;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  return { framesPerS: (latencies.length / elapsed) * 1000, p50: q(0.5), p99: q(0.99), late: late / latencies.length };
}

const repo = writeBenchRepository(join(ROOT, "functions"), [
  { name: "vad", from: "vad" },
  { name: "simple", from: "simple" },
]);
const server = await spawnServer(process.execPath, [join(ROOT, "adapters", "node", "bin.mjs"), "serve", "--repo", repo, "--model-control-mode", "none", "--port", "0"]);
const rows: { streams: number; framesPerS: number; p50: number; p99: number }[] = [];
let alone = 0;
let path32 = 0;
let batched32 = 0;
let realtime: Awaited<ReturnType<typeof served>> | undefined;
try {
  await served(server.url, 8, false); // warm-up
  alone = await inProcess();
  log(`vad in-process, stream by stream: ${alone.toFixed(0)} frames/s`);
  batched32 = await batchedInProcess(32);
  log(`vad in-process, batches of 32: ${batched32.toFixed(0)} frames/s`);
  await servingPath(server.url, 32); // warm-up
  path32 = await servingPath(server.url, 32);
  log(`serving path alone (simple, 32 clients): ${path32.toFixed(0)} req/s`);
  for (const streams of [8, 32, 128]) {
    const r = await served(server.url, streams, false);
    rows.push({ streams, ...r });
    log(`vad served, ${streams} streams: ${r.framesPerS.toFixed(0)} frames/s (${(r.framesPerS / alone).toFixed(2)}× in-process), p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`);
  }
  realtime = await served(server.url, 128, true);
  log(`vad real time, 128 streams: ${realtime.framesPerS.toFixed(0)} frames/s, p50 ${realtime.p50.toFixed(2)} ms, p99 ${realtime.p99.toFixed(2)} ms, ${(realtime.late * 100).toFixed(1)} % late`);
} finally {
  await server.stop();
  rmSync(repo, { recursive: true, force: true });
}

const at32 = rows.find((r) => r.streams === 32)!;
const ceiling = 1 / (1 / path32 + 1 / batched32);
const lines = [
  "## Sequence batching: Silero VAD streams",
  "",
  "Generated by `npm run bench:vad` (bench/suites/vad.ts); rerun to refresh. The real Silero VAD v5 (functions/vad, its state kept",
  "in the server per stream). Served: N streams over HTTP (binary tensors, an undici pool of N connections), each a sequence of",
  "31 frames of 512 samples sent one at a time, restarting as a new sequence at its end. In-process: the same frames stream by",
  `stream on onnxruntime-node, batch 1, the state carried by hand — the script a user would write. ${WINDOW_MS / 1000} s windows; load`,
  "generator and server share the machine's 2 cores.",
  "",
  `- Date: ${new Date().toISOString()}`,
  "",
  `**Summary:** at 32 streams ${at32.framesPerS.toFixed(0)} frames/s served, ${(at32.framesPerS / alone).toFixed(2)}× the in-process loop's ${alone.toFixed(0)} (target ≥ 3×).`,
  `Ceiling in this run: ${(ceiling / alone).toFixed(2)}× (${ceiling.toFixed(0)} frames/s) — a frame is a request, and the serving path alone answers ${path32.toFixed(0)}`,
  `requests/s at 32 clients (\`simple\`), while the model batched 32 at a time computes ${batched32.toFixed(0)} frames/s; on one event loop the two`,
  `add up (1 / (1/${path32.toFixed(0)} + 1/${batched32.toFixed(0)})). Result ${(at32.framesPerS / ceiling * 100).toFixed(0)} % of that ceiling. Silero takes ${(1000 / alone).toFixed(3)} ms a frame alone —`,
  "less than one HTTP request's CPU here — so the 3× target, set for a heavier model, is out of reach on this machine by the transport, not the batcher.",
  `128 streams in real time (a frame every 32 ms each): p99 ${realtime!.p99.toFixed(1)} ms per frame (target < 32 ms), ${(realtime!.late * 100).toFixed(1)} % of frames answered later than 32 ms.`,
  "",
  "| streams | frames/s | ÷ in-process | p50 ms | p99 ms |",
  "|---:|---:|---:|---:|---:|",
  ...rows.map((r) => `| ${r.streams} | ${r.framesPerS.toFixed(0)} | ${(r.framesPerS / alone).toFixed(2)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`),
  `| in-process, stream by stream | ${alone.toFixed(0)} | 1.00 | | |`,
  `| 128, real time | ${realtime!.framesPerS.toFixed(0)} | | ${realtime!.p50.toFixed(2)} | ${realtime!.p99.toFixed(2)} |`,
  "",
];
if (values.quick) log(lines.join("\n"));
else writeResultsSection("vad", lines.join("\n"));
log(values.quick ? "bench:vad --quick: printed, bench/results/ left alone" : "bench:vad: wrote bench/results/vad.md");
