import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Ensembles written to cost the server far more than their request: long chains, chains listed
// backwards, conditions that read a large tensor many times, one input fanned out to many outputs.
// Each must cost time linear in its steps, or be refused fast naming the limit.

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** `same`: FP32 identity of any length (no batching); plus `chain`, an ensemble of `steps` written out. */
function repository(ensemble: string): string {
  const repo = tempRepository();
  mkdirSync(join(repo, "same", "1"), { recursive: true });
  writeFileSync(join(repo, "same", "function.yaml"), "backend: identity\nmax_batch_size: 0\ninput: [{ name: X, data_type: TYPE_FP32, dims: [-1] }]\noutput: [{ name: Y, data_type: TYPE_FP32, dims: [-1] }]\n");
  mkdirSync(join(repo, "chain", "1"), { recursive: true });
  writeFileSync(join(repo, "chain", "function.yaml"), ensemble);
  return repo;
}

function ensemble(outputs: string[], steps: string[]): string {
  return [
    "platform: ensemble",
    "max_batch_size: 0",
    "input: [{ name: T0, data_type: TYPE_FP32, dims: [-1] }]",
    `output: [${outputs.map((o) => `{ name: ${o}, data_type: TYPE_FP32, dims: [-1] }`).join(", ")}]`,
    "ensemble_scheduling:",
    "  step:",
    ...steps.map((s) => `    - ${s}`),
    "",
  ].join("\n");
}

// Written compactly (model_version defaults to -1): a chain of 3500 fits the 256 Ki characters a function.yaml may have.
const step = (from: string, to: string, condition?: string) => `{model_name: same, input_map: {X: ${from}}, output_map: {Y: ${to}}${condition ? `, condition: "${condition}"` : ""}}`;

/** A chain T0 → T1 → … → Tn, its steps listed in `order`. */
function chain(n: number, order: "forward" | "backward"): string {
  const steps = Array.from({ length: n }, (_, i) => step(`T${i}`, `T${i + 1}`));
  return ensemble([`T${n}`], order === "forward" ? steps : steps.reverse());
}

async function infer(values: number, parameters: Record<string, unknown> = {}) {
  const body = JSON.stringify({ inputs: [{ name: "T0", datatype: "FP32", shape: [values], data: Array.from({ length: values }, (_, i) => i) }], parameters });
  const started = performance.now();
  const response = await fetch(`${server!.url}/v2/models/chain/infer`, { method: "POST", body, headers: { "content-type": "application/json" } });
  const json = await response.json();
  return { status: response.status, json, ms: performance.now() - started };
}

describe("ensembles at scale", () => {
  it("runs a chain of 3500 steps listed backwards in time linear in its steps (5000 forwards took 825 ms)", { timeout: 60_000 }, async () => {
    server = await startServer({ repository: repository(chain(3500, "backward")), limits: { ensembleSteps: 3500 } });
    const first = await infer(4);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.outputs[0]).toMatchObject({ name: "T3500", data: [0, 1, 2, 3] });
    const timed = await infer(4);
    expect(timed.status).toBe(200);
    // ~160 ms here through the real server; the rescanning scheduler took ~690 ms (unit test: 20 000 steps).
    expect(timed.ms).toBeLessThan(1000);
  });

  it("refuses more steps than --max-ensemble-steps at load, naming the flag (2000 steps listed backwards)", { timeout: 60_000 }, async () => {
    server = await startServer({ repository: repository(chain(2000, "backward")) });
    const { status, json, ms } = await infer(1);
    expect(status).toBe(503);
    expect(json.error).toMatch(/ensemble_scheduling\.step: 2000 is over the server's ceiling of 1024 steps per ensemble \(--max-ensemble-steps\)/);
    expect(ms).toBeLessThan(5000);
  });

  it("reads a 4 M-element tensor once however many conditions reduce it (64 × sum(T0) on 16 MB), and max() of 200 000 elements without a stack overflow", { timeout: 60_000 }, async () => {
    const condition = Array.from({ length: 64 }, () => "sum(T0) > 0").join(" && ");
    server = await startServer({ repository: repository(ensemble(["A", "B"], [step("T0", "A", condition), step("T0", "B", "max(T0) == 199999")])) });
    const small = await infer(200_000);
    expect(small.status, JSON.stringify(small.json).slice(0, 300)).toBe(200);
    expect(small.json.outputs.map((o: { name: string }) => o.name).sort()).toEqual(["A", "B"]);
    const values = 4 << 20;
    const body = new TextEncoder().encode(JSON.stringify({ inputs: [{ name: "T0", datatype: "FP32", shape: [values], parameters: { binary_data_size: values * 4 } }], outputs: [{ name: "A", parameters: { binary_data: true } }] }));
    const payload = new Uint8Array(body.length + values * 4);
    payload.set(body);
    new Float32Array(payload.buffer, body.length, values).fill(1);
    const started = performance.now();
    const response = await fetch(`${server.url}/v2/models/chain/infer`, { method: "POST", body: payload, headers: { "inference-header-content-length": String(body.length), "content-type": "application/octet-stream" } });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(5000); // 70 passes over 16 MB froze the server 17.6 s
  });

  it("fails a request whose steps fan one input out past --max-ensemble-output-ratio with 413 naming it, at once", { timeout: 60_000 }, async () => {
    const outputs = Array.from({ length: 1000 }, (_, i) => `O${i}`);
    server = await startServer({ repository: repository(ensemble(outputs, outputs.map((o) => step("T0", o)))), limits: { ensembleSteps: 1000 } });
    const fine = await infer(16);
    expect(fine.status).toBe(200);
    expect(fine.json.outputs).toHaveLength(1000);
    const { status, json } = await infer(32_768, { force: 1 }); // 128 kB in, 128 MB out
    expect(status).toBe(413);
    expect(json.error).toMatch(/^ensemble 'chain': its outputs come to more than 67108864 bytes \(the least any answer may hold; 16× its 131072 input bytes is less \(--max-ensemble-output-ratio\)\); step \d+ \('same'\) passed it$/);
  });
});
