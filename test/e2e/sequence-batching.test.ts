import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as ort from "onnxruntime-node";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FUNCTIONS, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { noise, SR, speech } from "../../harness/speech-audio.ts";

// The sequence batcher on the real Silero VAD v5 (functions/vad): each request one 512-sample
// frame of one stream; the model's state stays in the server between a stream's frames; frames of
// concurrent streams share executions.

const FRAME = 512;

const frames = (audio: Float32Array) => Array.from({ length: Math.floor(audio.length / FRAME) }, (_, i) => audio.subarray(i * FRAME, (i + 1) * FRAME));

/** Each stream's probabilities run alone in-process, the state carried by hand. */
async function alone(session: ort.InferenceSession, audio: Float32Array): Promise<number[]> {
  let state = new Float32Array(256);
  const probs: number[] = [];
  for (const f of frames(audio)) {
    const r = await session.run({ input: new ort.Tensor("float32", Float32Array.from(f), [1, FRAME]), state: new ort.Tensor("float32", state, [2, 1, 128]), sr: new ort.Tensor("int64", BigInt64Array.of(16000n), []) });
    probs.push((r.output!.data as Float32Array)[0]!);
    state = Float32Array.from(r.stateN!.data as Float32Array);
  }
  return probs;
}

let server: TestServer;
let session: ort.InferenceSession;
beforeAll(async () => {
  server = await startServer({ repository: tempRepository("vad"), controlMode: "explicit", loadModels: ["vad"], grpc: true });
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
    expect(await frame(77, f)).toMatchObject({ status: 400, error: "inference request for sequence 77 to model 'vad' must start it with sequence_start: true (no such sequence is live: never started, ended by its sequence_end, or ended by an unload or reload of the function)" });
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

  it("counts sequences in the metrics: started, ended, live", async () => {
    const f = new Float32Array(FRAME);
    const read = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const value = (line: RegExp) => Number(text.split("\n").find((l) => line.test(l))?.split(" ").at(-1) ?? 0);
      return {
        start: value(/^tensorfn_sequences_total\{model="vad",version="1",event="start"\}/),
        end: value(/^tensorfn_sequences_total\{model="vad",version="1",event="end"\}/),
        live: value(/^tensorfn_sequences_live\{model="vad",version="1"\}/),
      };
    };
    // Exactly what these frames did, counted from the figures before them: other tests share the server.
    const before = await read();
    expect((await frame("m1", f, { start: true })).status).toBe(200);
    expect((await frame("m2", f, { start: true })).status).toBe(200);
    expect(await read()).toEqual({ start: before.start + 2, end: before.end, live: before.live + 2 });
    expect((await frame("m2", f, { end: true })).status).toBe(200);
    expect(await read()).toEqual({ start: before.start + 2, end: before.end + 1, live: before.live + 1 });
    expect((await frame("m1", f, { end: true })).status).toBe(200);
    expect(await read()).toEqual({ start: before.start + 2, end: before.end + 2, live: before.live });
  });

  it("takes a sequence's frames over gRPC as well (sequence_id and flags as InferParameters), one by one or all at once on a stream", async () => {
    const { credentials, loadPackageDefinition, Metadata } = await import("@grpc/grpc-js");
    const { loadSync } = await import("@grpc/proto-loader");
    const proto = (dir: string) => new URL(`../../runtime/${dir}/proto/`, import.meta.url).pathname;
    const definition = loadSync(["grpc_service.proto"], { includeDirs: [proto("grpc"), proto("config")], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
    const Service = (loadPackageDefinition(definition) as any).inference.GRPCInferenceService; // eslint-disable-line @typescript-eslint/no-explicit-any
    const client = new Service(server.grpc!, credentials.createInsecure());
    const audio = speech(1, 5);
    const expected = await alone(session, audio);
    const got: number[] = [];
    try {
      for (const [i, f] of frames(audio).entries()) {
        const parameters = { sequence_id: { int64_param: 4242 }, ...(i === 0 && { sequence_start: { bool_param: true } }), ...(i === 30 && { sequence_end: { bool_param: true } }) };
        const answer = await new Promise<any>((resolve, reject) => // eslint-disable-line @typescript-eslint/no-explicit-any
          client.ModelInfer({ model_name: "vad", parameters, inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME] }], raw_input_contents: [Buffer.from(Float32Array.from(f).buffer)] }, new Metadata(), (e: Error | null, v: unknown) => (e ? reject(e) : resolve(v))),
        );
        got.push(new Float32Array(new Uint8Array(answer.raw_output_contents[0]).buffer)[0]!);
      }
    } finally {
      client.close();
    }
    got.forEach((p, j) => expect(p, `frame ${j}`).toBeCloseTo(expected[j]!, 5));

    // Over ModelStreamInfer, every frame of two streams written at once: each stream's frames still run in order.
    const streamed = new Service(server.grpc!, credentials.createInsecure());
    const other = noise(1, 8);
    const expectedOther = await alone(session, other);
    const duplex = streamed.ModelStreamInfer();
    const answers = new Map<string, number>();
    const finished = new Promise<void>((resolve, reject) => {
      duplex.on("data", (m: any) => { // eslint-disable-line @typescript-eslint/no-explicit-any
        if (m.error_message) reject(new Error(m.error_message));
        answers.set(m.infer_response.id, new Float32Array(new Uint8Array(m.infer_response.raw_output_contents[0]).buffer)[0]!);
      });
      duplex.on("end", resolve);
      duplex.on("error", reject);
    });
    for (const [id, clip] of [[5151, audio], [5252, other]] as const) {
      frames(clip).forEach((f, i) => {
        const parameters = { sequence_id: { int64_param: id }, ...(i === 0 && { sequence_start: { bool_param: true } }), ...(i === 30 && { sequence_end: { bool_param: true } }) };
        duplex.write({ model_name: "vad", id: `${id}/${i}`, parameters, inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME] }], raw_input_contents: [Buffer.from(Float32Array.from(f).buffer)] });
      });
    }
    duplex.end();
    await finished;
    streamed.close();
    expected.forEach((p, j) => expect(answers.get(`5151/${j}`), `stream 5151 frame ${j}`).toBeCloseTo(p, 5));
    expectedOther.forEach((p, j) => expect(answers.get(`5252/${j}`), `stream 5252 frame ${j}`).toBeCloseTo(p, 5));
  });

  it("finds the speech in a WAV file streamed by the example client (functions/vad/stream-wav.ts)", async () => {
    const { streamFrames, wavSamples } = await import("../../functions/vad/stream-wav.ts");
    const { speechSegments } = await import("../../functions/vad/speech-segments.ts");
    // 1 s silence, 1.5 s speech, 1 s quiet noise, 1 s speech, 0.5 s silence — as 16-bit PCM.
    const parts = [new Float32Array(SR), speech(1.5, 0.3), noise(1, 5), speech(1, 1.1), new Float32Array(SR / 2)];
    const audio = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (audio.set(p, at), at + p.length), 0);
    const wav = pcmWav(audio);
    const probabilities = await streamFrames(server.url, wavSamples(wav), "wav-test");
    const segments = speechSegments(probabilities, { frameMs: (FRAME / SR) * 1000 });
    expect(segments).toHaveLength(2);
    expect(segments[0]!.start).toBeCloseTo(1.0, 0);
    expect(segments[0]!.end).toBeGreaterThan(2.2);
    expect(segments[0]!.end).toBeLessThan(2.9);
    expect(segments[1]!.start).toBeGreaterThan(3.4);
    expect(segments[1]!.start).toBeLessThan(3.8);
    expect(segments[1]!.end).toBeLessThan(4.9);
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

describe("a function holding live sequences", () => {
  it("does not park for idleness while a sequence is live, and parks once none is", async () => {
    const idle = await startServer({ repository: tempRepository("vad"), controlMode: "explicit", loadModels: ["vad"], idleTimeoutMs: 300 });
    // From the index, which loads nothing (model metadata would wake a parked function).
    const state = async () =>
      ((await (await fetch(`${idle.url}/v2/repository/index`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).json()) as { name: string; state: string }[]).find((e) => e.name === "vad")!.state;
    const send = (flags: object) =>
      fetch(`${idle.url}/v2/models/vad/infer`, { method: "POST", body: JSON.stringify({ parameters: { sequence_id: 1, ...flags }, inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME], data: Array(FRAME).fill(0) }] }) });
    try {
      expect((await send({ sequence_start: true })).status).toBe(200);
      // Three idle timeouts with the sequence live: still not parked (a wait is the only way to show a non-event).
      await new Promise((r) => setTimeout(r, 900));
      expect(await state()).toBe("READY");
      expect((await send({})).status).toBe(200); // its state is still there
      expect((await send({ sequence_end: true })).status).toBe(200);
      // Parks once its idle timeout (300 ms) passes with no sequence live: polled, not slept on.
      const deadline = performance.now() + 5_000;
      while ((await state()) !== "PARKED" && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await state()).toBe("PARKED");
    } finally {
      await idle.close();
    }
  });

  it("is not parked through the park API either: 400 naming its live sequences, and the sequence carries on", async () => {
    const own = await startServer({ repository: tempRepository("vad"), controlMode: "explicit", loadModels: ["vad"] });
    const park = () => fetch(`${own.url}/v2/repository/models/vad/park`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const send = async (flags: object) =>
      (await fetch(`${own.url}/v2/models/vad/infer`, { method: "POST", body: JSON.stringify({ parameters: { sequence_id: 7070, ...flags }, inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME], data: Array(FRAME).fill(0) }] }) })).status;
    try {
      expect(await send({ sequence_start: true })).toBe(200);
      const refused = await park();
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toMatch(/'vad' is not parked: version 1 holds 1 live sequence\(s\), which parking would end/);
      // Its state is still there: the next frame of the sequence is served, not refused as unknown.
      expect(await send({})).toBe(200);
      expect(await send({ sequence_end: true })).toBe(200);
      expect((await park()).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});

/** A 16-bit PCM mono 16 kHz WAV file of `samples`. */
function pcmWav(samples: Float32Array): Uint8Array {
  const bytes = new Uint8Array(44 + 2 * samples.length);
  const view = new DataView(bytes.buffer);
  const text = (at: number, s: string) => [...s].forEach((c, i) => (bytes[at + i] = c.charCodeAt(0)));
  text(0, "RIFF");
  view.setUint32(4, 36 + 2 * samples.length, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, SR, true);
  view.setUint32(28, 2 * SR, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, "data");
  view.setUint32(40, 2 * samples.length, true);
  samples.forEach((s, i) => view.setInt16(44 + 2 * i, Math.max(-32768, Math.min(32767, Math.round(s * 32767))), true));
  return bytes;
}

describe("a handler's sequence hooks", () => {
  it("hears each sequence start, end, restart and idle release (onSequence), in order", async () => {
    const repo = tempRepository("vad");
    // The hooks report to a second function (ctx.infer), which the test reads back.
    writeFileSync(join(repo, "vad", "hooks.ts"), [
      `import type { HandlerContext, SequenceHookEvent } from "tensorfn";`,
      `export async function onSequence(e: SequenceHookEvent, ctx: HandlerContext) {`,
      `  await ctx.infer("recorder", { EVENT: { datatype: "BYTES", shape: [1], data: [new TextEncoder().encode(e.event + " " + e.id)] } });`,
      `}`,
    ].join("\n"));
    writeFileSync(join(repo, "vad", "function.yaml"), readFileSync(join(repo, "vad", "function.yaml"), "utf8").replace("max_sequence_idle_microseconds: 10000000", "max_sequence_idle_microseconds: 300000") + "handler: hooks.ts\n");
    mkdirSync(join(repo, "recorder", "1"), { recursive: true });
    writeFileSync(join(repo, "recorder", "function.yaml"), "backend: handler\nhandler: recorder.ts\ninput: [{ name: EVENT, data_type: TYPE_STRING, dims: [1] }]\noutput: [{ name: LOG, data_type: TYPE_STRING, dims: [1] }]\n");
    writeFileSync(join(repo, "recorder", "recorder.ts"), [
      `import type { Tensor } from "tensorfn";`,
      `const seen: string[] = [];`,
      `export function compute(inputs: Record<string, Tensor>) {`,
      `  const text = new TextDecoder().decode((inputs.EVENT!.data as Uint8Array[])[0]);`,
      `  if (text !== "read") seen.push(text);`,
      `  return { LOG: { datatype: "BYTES", shape: [1], data: [new TextEncoder().encode(seen.join(","))] } };`,
      `}`,
    ].join("\n"));
    const hooked = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["vad", "recorder"] });
    const send = (id: number, flags: object) =>
      fetch(`${hooked.url}/v2/models/vad/infer`, { method: "POST", body: JSON.stringify({ parameters: { sequence_id: id, ...flags }, inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME], data: Array(FRAME).fill(0) }] }) });
    const log = async () => {
      const r = await fetch(`${hooked.url}/v2/models/recorder/infer`, { method: "POST", body: JSON.stringify({ inputs: [{ name: "EVENT", datatype: "BYTES", shape: [1], data: ["read"] }] }) });
      return ((await r.json()) as { outputs: { data: string[] }[] }).outputs[0]!.data[0]!.split(",").filter(Boolean);
    };
    try {
      for (const [id, flags] of [[1, { sequence_start: true }], [1, { sequence_start: true }], [1, { sequence_end: true }], [2, { sequence_start: true }]] as const) {
        expect((await send(id, flags)).status).toBe(200);
      }
      await new Promise((r) => setTimeout(r, 800)); // sequence 2 goes idle
      await expect.poll(log, { timeout: 5000 }).toEqual(["start 1", "restart 1", "start 1", "end 1", "start 2", "idle 2"]);
    } finally {
      await hooked.close();
    }
  });
});

describe("a state's initial_state from a data_file (Triton's)", () => {
  it("starts every sequence from the file's state, and fails the load of a file of the wrong size or a missing one", async () => {
    // The state Silero leaves after a second of speech, as raw little-endian FP32.
    let state = new Float32Array(256);
    const sr = new ort.Tensor("int64", BigInt64Array.of(16000n), []);
    for (const f of frames(speech(1, 2))) {
      const r = await session.run({ input: new ort.Tensor("float32", Float32Array.from(f), [1, FRAME]), state: new ort.Tensor("float32", state, [2, 1, 128]), sr });
      state = Float32Array.from(r.stateN!.data as Float32Array);
    }
    const probe = frames(noise(1, 4))[3]!;
    const expected = (await session.run({ input: new ort.Tensor("float32", Float32Array.from(probe), [1, FRAME]), state: new ort.Tensor("float32", state, [2, 1, 128]), sr })).output!.data as Float32Array;
    const fromZeros = (await session.run({ input: new ort.Tensor("float32", Float32Array.from(probe), [1, FRAME]), state: new ort.Tensor("float32", new Float32Array(256), [2, 1, 128]), sr })).output!.data as Float32Array;
    expect(Math.abs(expected[0]! - fromZeros[0]!)).toBeGreaterThan(1e-4); // the file's state matters

    const repo = tempRepository("vad");
    const yaml = readFileSync(join(repo, "vad", "function.yaml"), "utf8");
    const withFile = (file: string) => yaml.replace("batch_axis: 1 }", `batch_axis: 1, initial_state: [{ data_type: TYPE_FP32, dims: [2, 128], data_file: ${file} }] }`);
    mkdirSync(join(repo, "vad", "initial_state"));
    writeFileSync(join(repo, "vad", "initial_state", "speaking.bin"), new Uint8Array(state.buffer));
    writeFileSync(join(repo, "vad", "initial_state", "short.bin"), new Uint8Array(100));
    writeFileSync(join(repo, "vad", "function.yaml"), withFile("speaking.bin"));
    for (const [name, file] of [["short", "short.bin"], ["missing", "nowhere.bin"]]) {
      mkdirSync(join(repo, name!));
      for (const entry of ["1", "initial_state"]) cpSync(join(repo, "vad", entry), join(repo, name!, entry), { recursive: true });
      writeFileSync(join(repo, name!, "function.yaml"), withFile(file!));
    }
    const started = await startServer({ repository: repo, controlMode: "lazy" });
    try {
      const send = async (model: string) => {
        const r = await fetch(`${started.url}/v2/models/${model}/infer`, { method: "POST", body: JSON.stringify({ parameters: { sequence_id: 1, sequence_start: true }, inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME], data: [...probe] }] }) });
        return (await r.json()) as { outputs?: { data: number[] }[]; error?: string };
      };
      expect((await send("vad")).outputs![0]!.data[0]).toBeCloseTo(expected[0]!, 5);
      expect((await send("short")).error).toMatch(/state 'state' initial_state data_file 'short\.bin' is 100 bytes; one sequence's TYPE_FP32 \[2,128\] state is 1024/);
      expect((await send("missing")).error).toMatch(/initial_state data_file 'nowhere\.bin' was not found in the function's initial_state\/ folder/);
    } finally {
      await started.close();
    }
  });
});
