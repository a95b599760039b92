import { afterEach, describe, expect, it } from "vitest";
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// The real Silero VAD v5 (@ricky0123/vad-web): input [batch, samples], state [2, batch, 128], sr a
// scalar. Its STFT pads by reflection, so it cannot run on one sample: `auto`'s zero probe fails.
const SILERO = fileURLToPath(new URL("../../node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx", import.meta.url));

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A repository with Silero as `vad`, with `yaml` as its function.yaml (none when undefined) and `files` in warmup/. */
function sileroRepository(yaml?: string, files: Record<string, Uint8Array> = {}): string {
  const repo = tempRepository();
  mkdirSync(join(repo, "vad", "1"), { recursive: true });
  copyFileSync(SILERO, join(repo, "vad", "1", "model.onnx"));
  if (yaml !== undefined) writeFileSync(join(repo, "vad", "function.yaml"), yaml);
  if (Object.keys(files).length > 0) mkdirSync(join(repo, "vad", "warmup"));
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(repo, "vad", "warmup", name), bytes);
  return repo;
}

/** 512 samples of a 440 Hz tone at 16 kHz: one frame Silero accepts. */
const tone = () => Array.from({ length: 512 }, (_, i) => Math.round(0.5 * Math.sin((2 * Math.PI * 440 * i) / 16000) * 1e5) / 1e5);
const toneBytes = () => new Uint8Array(Float32Array.from(tone()).buffer);

async function inferFrame(): Promise<{ status: number; json: { outputs?: { name: string; shape: number[]; data: number[] }[]; error?: string } }> {
  const response = await fetch(`${server!.url}/v2/models/vad/infer`, {
    method: "POST",
    body: JSON.stringify({
      inputs: [
        { name: "input", datatype: "FP32", shape: [1, 512], data: tone() },
        { name: "state", datatype: "FP32", shape: [2, 1, 128], data: new Array(256).fill(0) },
        { name: "sr", datatype: "INT64", shape: [1], data: [16000] },
      ],
    }),
  });
  return { status: response.status, json: await response.json() };
}

async function parameters(): Promise<Record<string, string>> {
  const config = await (await fetch(`${server!.url}/v2/models/vad/config`)).json();
  return Object.fromEntries(Object.entries(config.parameters as Record<string, { string_value: string }>).map(([k, v]) => [k, v.string_value]));
}

const WARMUP = (input: string) => `model_warmup:
  - name: tone
    count: 2
    inputs:
      input: { data_type: TYPE_FP32, dims: [1, 512], ${input} }
      state: { data_type: TYPE_FP32, dims: [2, 1, 128], zero_data: true }
      sr: { data_type: TYPE_INT64, dims: [1], data: [16000] }
`;

describe("placement and warm-up on a model that needs real input (Silero VAD)", () => {
  it("loads with no function.yaml under execution_thread auto: a probe that fails puts it in a worker", async () => {
    server = await startServer({ repository: sileroRepository() });
    const answer = await inferFrame();
    expect(answer.status).toBe(200);
    expect(answer.json.outputs!.find((o) => o.name === "output")!.shape).toEqual([1, 1]);
    const p = await parameters();
    expect(p.execution_thread).toBe("worker");
    expect(p.execution_thread_requested).toBe("auto");
    expect(p.execution_thread_measured_us).toBeUndefined();
  });

  it("warms up and times `auto` on a warmup/ file (Triton's input_data_file) and inline data", async () => {
    server = await startServer({ repository: sileroRepository(WARMUP("input_data_file: tone.f32"), { "tone.f32": toneBytes() }) });
    const answer = await inferFrame();
    expect(answer.status).toBe(200);
    // Timed on the sample (a measurement where the zero probe could not run one).
    expect(Number((await parameters()).execution_thread_measured_us)).toBeGreaterThan(0);
  });

  it("takes one sample's values inline as `data`", async () => {
    server = await startServer({ repository: sileroRepository(WARMUP(`data: [${tone().join(", ")}]`)) });
    expect((await inferFrame()).status).toBe(200);
    expect(Number((await parameters()).execution_thread_measured_us)).toBeGreaterThan(0);
  });

  it("fails the load, naming the sample, input and file, for a file of the wrong size, a missing one, or one outside warmup/", async () => {
    server = await startServer({ repository: sileroRepository(WARMUP("input_data_file: tone.f32"), { "tone.f32": toneBytes().slice(0, 1000) }) });
    let answer = await inferFrame();
    expect(answer.status).toBe(503);
    expect(answer.json.error).toMatch(/model_warmup 'tone' input 'input': input_data_file holds 1000 bytes where dims need 2048 \(512 × 4, raw little-endian\)/);
    await server.close();

    server = await startServer({ repository: sileroRepository(WARMUP("input_data_file: missing.f32")) });
    answer = await inferFrame();
    expect(answer.json.error).toMatch(/input_data_file 'missing\.f32' was not found in the function's warmup\/ folder/);
    await server.close();

    const repo = sileroRepository(WARMUP("input_data_file: link.f32"), { "tone.f32": toneBytes() });
    writeFileSync(join(repo, "secret.f32"), toneBytes());
    symlinkSync(join(repo, "secret.f32"), join(repo, "vad", "warmup", "link.f32"));
    server = await startServer({ repository: repo });
    answer = await inferFrame();
    expect(answer.json.error).toMatch(/input_data_file 'link\.f32' was not found in the function's warmup\/ folder/);
    expect(answer.json.error).not.toContain(repo);
  });

  it("refuses at parse time a path that leaves warmup/, two sources for one input, and data of the wrong length", async () => {
    for (const [input, message] of [
      ["input_data_file: ../function.yaml", /leaves or skips a folder/],
      ["input_data_file: tone.f32, zero_data: true", /needs one source/],
      ["data: [1, 2, 3]", /data holds 3 values where dims \[1,512\] need 512/],
    ] as const) {
      server = await startServer({ repository: sileroRepository(WARMUP(input)) });
      const answer = await inferFrame();
      expect(answer.status, input).toBe(503);
      expect(answer.json.error, input).toMatch(message);
      await server.close();
    }
    server = undefined;
  });
});
