/**
 * One raw cold start in a process of its own, as a hand-written script pays it once at startup:
 * onnxruntime loaded and the model's bytes read first, then create the session (the options of
 * raw-cold-start.ts) and run it once, timed. Nothing was allocated for a model before, so the
 * session's memory is faulted in afresh — as it is after a park, which returns freed memory to the
 * system (malloc_trim), and unlike the repeated creates of `rawColdStart`, which reuse it.
 *
 *   node --import tsx bench/suites/lifecycle/raw-fresh-create.ts <model.onnx>   → {"ms": 12.3}
 */
import { readFile } from "node:fs/promises";
import os from "node:os";
import * as ort from "onnxruntime-node";
import { zeroFeeds } from "./raw-cold-start.ts";

const path = process.argv[2]!;
const bytes = new Uint8Array(await readFile(path));
const started = performance.now();
const session = await ort.InferenceSession.create(bytes, {
  executionProviders: ["cpu"],
  intraOpNumThreads: os.availableParallelism(),
  extra: { session: { intra_op: { allow_spinning: "0" } } },
});
await session.run(zeroFeeds(session));
console.log(JSON.stringify({ ms: performance.now() - started }));
