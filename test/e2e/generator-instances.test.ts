import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// A generator with `instance_group: [{ count: 2 }]` through the real server and ONNX Runtime: two
// continuous-batching loops, each over a KV cache of its own, both serving.
let server: TestServer;
let client: OpenAI;
beforeAll(async () => {
  const repo = tempRepository("tiny_gpt");
  appendFileSync(join(repo, "tiny_gpt", "function.yaml"), "instance_group: [{ count: 2 }]\n");
  server = await startServer({ repository: repo, controlMode: "none", traceRate: 1, dashboard: true });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

type TraceEvent = { ph: string; tid: number; cat?: string; args?: { name?: string } };

describe("a generator with two instances", () => {
  it("serves on both, in workers, each answer what one instance gives", async () => {
    const config = await (await fetch(`${server.url}/v2/models/tiny_gpt/config`)).json();
    expect(config.instance_group[0].count).toBe(2);
    expect(config.parameters.execution_thread.string_value).toBe("worker");
    const prompts = Array.from({ length: 8 }, (_, i) => `Tell me about the number ${i % 4}.`);
    const answers = await Promise.all(prompts.map((prompt) => client.completions.create({ model: "tiny_gpt", prompt, max_tokens: 12, temperature: 0 })));
    // Greedy: the same prompt gives the same text whichever instance ran it.
    for (let i = 0; i < 4; i++) expect(answers[i + 4]!.choices[0]!.text).toBe(answers[i]!.choices[0]!.text);
    expect(answers.every((a) => a.usage!.completion_tokens === 12)).toBe(true);
    const trace = await (await fetch(`${server.url}/v2/trace?seconds=60`)).json();
    const events: TraceEvent[] = trace.traceEvents;
    expect(events.filter((e) => e.ph === "M").map((e) => e.args?.name)).toEqual(expect.arrayContaining(["instance 1", "instance 2"]));
    const tracks = new Set(events.filter((e) => e.cat === "execution").map((e) => e.tid));
    expect([...tracks].sort()).toEqual([1, 2]);
  });

  it("reports both instances' KV caches as one: slots, and memory that counts both caches", async () => {
    const snapshot = await (await fetch(`${server.url}/v2/dashboard/snapshot`)).json();
    const row = snapshot.functions.find((f: { name: string }) => f.name === "tiny_gpt");
    expect(row.instances).toBe(2);
    expect(row.generation.slots).toBe(64); // max_num_seqs 32 per instance
    expect(row.generation.kvUsage).toBe(0);
    // The dashboard's rows of slots set the instances side by side: 64 a row.
    expect(row.generation.recent.length).toBeGreaterThan(0);
    expect(row.generation.recent.every((slots: number[]) => slots.length === 64)).toBe(true);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const host = Number(/^tensorfn_memory_bytes\{[^}]*memory="host"[^}]*model="tiny_gpt"[^}]*\} (\d+)$/m.exec(metrics)?.[1] ?? /^tensorfn_memory_bytes\{[^}]*model="tiny_gpt"[^}]*memory="host"[^}]*\} (\d+)$/m.exec(metrics)?.[1]);
    // 16 MiB of KV cache per instance (functions/tiny_gpt/function.yaml), besides the model.
    expect(host).toBeGreaterThan(2 * 16 * 1024 * 1024);
  });
});
