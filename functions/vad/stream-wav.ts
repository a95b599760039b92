/**
 * Streams a WAV file to the `vad` function as one sequence, frame by frame, and prints where the
 * speech is:
 *   npx tsx functions/vad/stream-wav.ts speech.wav [http://127.0.0.1:8000]
 * The WAV must be 16-bit PCM or 32-bit float, mono, 16 kHz (Silero's rate). Each request carries one
 * 512-sample frame; the model's state stays in the server between them (sequence_batching).
 */
import { readFile } from "node:fs/promises";
import { speechSegments } from "./speech-segments.ts";

const FRAME = 512;
const RATE = 16000;

/** The samples of a mono 16 kHz WAV, as floats in [-1, 1]. */
export function wavSamples(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("not a WAV file");
  let format: { type: number; channels: number; rate: number; bits: number } | undefined;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === "fmt ") format = { type: view.getUint16(body, true), channels: view.getUint16(body + 2, true), rate: view.getUint32(body + 4, true), bits: view.getUint16(body + 14, true) };
    if (id === "data") {
      if (!format) throw new Error("WAV data before its fmt chunk");
      if (format.channels !== 1 || format.rate !== RATE) throw new Error(`need mono ${RATE} Hz audio, got ${format.channels} channel(s) at ${format.rate} Hz`);
      const data = bytes.subarray(body, body + Math.min(size, bytes.length - body));
      if (format.type === 1 && format.bits === 16) return Float32Array.from({ length: data.length >> 1 }, (_, i) => view.getInt16(body + 2 * i, true) / 32768);
      if (format.type === 3 && format.bits === 32) return Float32Array.from({ length: data.length >> 2 }, (_, i) => view.getFloat32(body + 4 * i, true));
      throw new Error(`need 16-bit PCM or 32-bit float samples, got format ${format.type} at ${format.bits} bits`);
    }
    at = body + size + (size & 1);
  }
  throw new Error("WAV file without a data chunk");
}

/** Sends `samples` as sequence `id` and answers each frame's speech probability. */
export async function streamFrames(url: string, samples: Float32Array, id: string | number = `wav-${Date.now()}`): Promise<number[]> {
  const count = Math.floor(samples.length / FRAME);
  const probabilities: number[] = [];
  for (let i = 0; i < count; i++) {
    const parameters = { sequence_id: id, ...(i === 0 && { sequence_start: true }), ...(i === count - 1 && { sequence_end: true }) };
    const frame = samples.subarray(i * FRAME, (i + 1) * FRAME);
    const response = await fetch(`${url}/v2/models/vad/infer`, {
      method: "POST",
      body: JSON.stringify({ parameters, inputs: [{ name: "input", datatype: "FP32", shape: [1, FRAME], data: Array.from(frame) }] }),
    });
    const answer = (await response.json()) as { outputs?: { data: number[] }[]; error?: string };
    if (!response.ok) throw new Error(`frame ${i}: ${answer.error}`);
    probabilities.push(answer.outputs![0]!.data[0]!);
  }
  return probabilities;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, url = "http://127.0.0.1:8000"] = process.argv.slice(2);
  if (!file) {
    console.error("usage: npx tsx functions/vad/stream-wav.ts <file.wav> [server URL]");
    process.exit(2);
  }
  const probabilities = await streamFrames(url, wavSamples(new Uint8Array(await readFile(file))));
  const segments = speechSegments(probabilities, { frameMs: (FRAME / RATE) * 1000 });
  for (const s of segments) console.log(`speech ${s.start.toFixed(2)}s – ${s.end.toFixed(2)}s`);
  if (segments.length === 0) console.log("no speech");
}
