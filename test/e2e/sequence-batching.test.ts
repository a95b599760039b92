import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as ort from "onnxruntime-node";
import { join } from "node:path";
import { FUNCTIONS, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// The sequence batcher on the real Silero VAD v5 (functions/vad): each request one 512-sample
// frame of one stream; the model's state stays in the server between a stream's frames; frames of
// concurrent streams share executions.

const SR = 16000;
const FRAME = 512;

/** Voiced speech-like audio: harmonics of a gliding 110 Hz voice shaped by two formants, in 3 Hz syllables. */
function speech(seconds: number, seed: number): Float32Array {
  const out = new Float32Array(SR * seconds);
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const t = i / SR;
    const f0 = 110 + 30 * Math.sin(2 * Math.PI * 0.7 * t + seed);
    phase += (2 * Math.PI * f0) / SR;
    const envelope = Math.max(0, Math.sin(2 * Math.PI * 3 * t + seed)) ** 0.6;
    let v = 0;
    for (let h = 1; h <= 30; h++) {
      const f = h * f0;
      v += ((Math.exp(-(((f - 700) / 150) ** 2)) + 0.6 * Math.exp(-(((f - 1200) / 200) ** 2)) + 0.05) * Math.sin(h * phase)) / h ** 0.3;
    }
    out[i] = (0.3 * envelope * v) / 4;
  }
  return out;
}

/** Quiet noise from a seeded generator. */
function noise(seconds: number, seed: number): Float32Array {
  let x = seed;
  return Float32Array.from({ length: SR * seconds }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return (x / 2 ** 31 - 0.5) * 0.02;
  });
}

const frames = (audio: Float32Array) => Array.from({ length: Math.floor(audio.length / FRAME) }, (_, i) => audio.subarray(i * FRAME, (i + 1) * FRAME));

/** Each stream's probabilities run alone in-process, the state carried by hand. */
async function alone(session: ort.InferenceSession, audio: Float32Array): Promise<number[]> {
  let state = new Float32Array(256);
  const probs: number[] = [];
  for (const f of frames(audio)) {
    const r = await session.run({ input: new ort.Tensor("float32", Float32Array.from(f), [1, FRAME]), state: new ort.Tensor("float32", state, [2, 1, 128]), sr: new ort.Tensor("int64", BigInt64Array.of(16000n), []) });
    probs.push((r.output!.data as Float32Array)[0]!);
    state = r.stateN!.data as Float32Array;
  }
  return probs;
}

let server: TestServer;
let session: ort.InferenceSession;
beforeAll(async () => {
  server = await startServer({ repository: tempRepository("vad"), controlMode: "explicit", loadModels: ["vad"] });
  session = await ort.InferenceSession.create(join(FUNCTIONS, "vad", "1", "model.onnx"));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await session?.release();
});

async function frame(id: number | string, samples: Float32Array, flags: { start?: boolean; end?: boolean } = {}) {
  const r = await fetch(`${server.url}/v2/models/vad/infer`, {
    method: "POST",
    body: JSON.stringify({
      parameters: { sequence_id: id, ...(flags.start && { sequence_start: true }), ...(flags.end && { sequence_end: true }) },
      inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME], data: [...samples] }],
    }),
  });
  const json = (await r.json()) as { outputs?: { data: number[] }[]; error?: string };
  return { status: r.status, error: json.error, p: json.outputs?.[0]?.data[0] };
}

/** A stream's frames in order; `order` interleaves several streams' sends. */
async function stream(id: number | string, audio: Float32Array): Promise<number[]> {
  const list = frames(audio);
  const out: number[] = [];
  for (let i = 0; i < list.length; i++) {
    const answer = await frame(id, list[i]!, { start: i === 0, end: i === list.length - 1 });
    expect(answer.status, answer.error).toBe(200);
    out.push(answer.p!);
  }
  return out;
}

describe("sequence batching on Silero VAD", () => {
  it("keeps each stream's state apart under concurrency: every stream's probabilities equal the stream run alone, and streams share executions", async () => {
    const audio = [speech(1, 0), noise(1, 7), speech(1, 2), new Float32Array(SR), speech(1, 4), noise(1, 9)];
    const expected = await Promise.all(audio.map((a) => alone(session, a)));
    const before = await stats();
    const served = await Promise.all(audio.map((a, i) => stream(i + 1, a)));
    served.forEach((probs, i) => probs.forEach((p, j) => expect(p, `stream ${i + 1} frame ${j}`).toBeCloseTo(expected[i]![j]!, 5)));
    const after = await stats();
    const requests = after.inference_count - before.inference_count;
    expect(requests).toBe(audio.length * 31);
    expect(after.execution_count - before.execution_count).toBeLessThan(requests); // frames of several streams ran together
  });

  it("tells speech from noise and silence", async () => {
    const [voiced, quiet, silent] = await Promise.all([stream("speech", speech(2, 1)), stream("noise", noise(2, 3)), stream("silence", new Float32Array(2 * SR))]);
    expect(Math.max(...voiced)).toBeGreaterThan(0.6);
    expect(Math.max(...quiet)).toBeLessThan(0.3);
    expect(Math.max(...silent)).toBeLessThan(0.1);
  });

  it("refuses a frame outside a live sequence, or without one, naming the sequence and the way to start it", async () => {
    const f = new Float32Array(FRAME);
    expect(await frame(77, f)).toMatchObject({ status: 400, error: "inference request for sequence 77 to model 'vad' must start it with sequence_start: true (no such sequence is live)" });
    const none = await fetch(`${server.url}/v2/models/vad/infer`, { method: "POST", body: JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME], data: [...f] }] }) });
    expect(none.status).toBe(400);
    expect(((await none.json()) as { error: string }).error).toMatch(/must specify a non-zero or non-empty sequence_id/);
    const two = await fetch(`${server.url}/v2/models/vad/infer`, {
      method: "POST",
      body: JSON.stringify({ parameters: { sequence_id: 78, sequence_start: true }, inputs: [{ name: "input", datatype: "FP32", shape: [2, FRAME], data: [...f, ...f] }] }),
    });
    expect(((await two.json()) as { error: string }).error).toBe("a request of sequence 78 to model 'vad' must have batch size 1, not 2");
    await frame(79, f, { start: true });
    await frame(79, f, { end: true });
    expect((await frame(79, f)).error).toMatch(/no such sequence is live/);
  });

  it("reports its configuration in Triton's form", async () => {
    const config = (await (await fetch(`${server.url}/v2/models/vad/config`)).json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(config.sequence_batching).toMatchObject({ max_sequence_idle_microseconds: 10000000, oldest: { max_queue_delay_microseconds: 500 }, state: [{ input_name: "state", output_name: "stateN", dims: [2, 128] }] });
    expect(config.input.map((i: { name: string }) => i.name)).toEqual(["input"]);
    expect(config.output.map((o: { name: string }) => o.name)).toEqual(["output"]);
  });
});

async function stats(): Promise<{ inference_count: number; execution_count: number }> {
  const json = (await (await fetch(`${server.url}/v2/models/vad/stats`)).json()) as { model_stats: { inference_count: number; execution_count: number }[] };
  return json.model_stats[0]!;
}
