import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// One sampling table for every protocol (runtime/core/sampling-fields.ts): a generator's
// generation_config.json sets the defaults of KServe requests as of OpenAI's, and both protocols
// accept and refuse the same values.

let server: TestServer;
let client: OpenAI;
beforeAll(async () => {
  const repository = tempRepository("tiny_gpt");
  const file = join(repository, "tiny_gpt", "1", "generation_config.json");
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), temperature: 1.0, top_k: 20 }));
  server = await startServer({ repository, controlMode: "explicit", loadModels: ["tiny_gpt"] });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

const PROMPT = [72, 101, 108, 108, 111];
const infer = (parameters: Record<string, unknown>) =>
  fetch(`${server.url}/v2/models/tiny_gpt/infer`, { method: "POST", body: JSON.stringify({ parameters, inputs: [{ name: "input_ids", datatype: "INT64", shape: [PROMPT.length], data: PROMPT }] }) });
const ids = async (parameters: Record<string, unknown>) => {
  const res = await infer(parameters);
  expect(res.status, JSON.stringify(parameters)).toBe(200);
  return ((await res.json()).outputs as { name: string; data: number[] }[]).find((o) => o.name === "output_ids")!.data;
};

describe("sampling, one table for every protocol", () => {
  it("a KServe request silent on sampling samples as generation_config.json says, as an OpenAI one does", async () => {
    const silent = await ids({ max_tokens: 24, seed: 5 });
    expect(silent).toEqual(await ids({ max_tokens: 24, seed: 5, temperature: 1, top_k: 20 }));
    expect(silent).not.toEqual(await ids({ max_tokens: 24, temperature: 0 }));
    // OpenAI's completions, silent too, with the same seed: the same tokens (their text).
    const completion = await client.completions.create({ model: "tiny_gpt", prompt: PROMPT, max_tokens: 24, seed: 5, logprobs: 0 });
    expect(completion.choices[0]!.logprobs!.tokens!.length).toBe(24);
    const greedy = await client.completions.create({ model: "tiny_gpt", prompt: PROMPT, max_tokens: 24, temperature: 0 });
    expect(completion.choices[0]!.text).not.toBe(greedy.choices[0]!.text);
  });

  it("accepts and refuses the same values over both: top_k -1 (all tokens) and a negative seed are taken, top_k -2 refused naming the range", async () => {
    expect(await ids({ max_tokens: 4, top_k: -1, seed: -7 })).toHaveLength(4);
    await expect(client.completions.create({ model: "tiny_gpt", prompt: PROMPT, max_tokens: 4, top_k: -1, seed: -7 } as OpenAI.CompletionCreateParamsNonStreaming)).resolves.toBeDefined();
    const kserve = await infer({ top_k: -2 });
    expect(kserve.status).toBe(400);
    expect((await kserve.json()).error).toMatch(/'top_k' must be an integer from -1 to 1048576, got -2/);
    const openai = await client.completions.create({ model: "tiny_gpt", prompt: PROMPT, top_k: -2 } as OpenAI.CompletionCreateParamsNonStreaming).catch((e: unknown) => e as { status: number; param: string; message: string });
    expect(openai).toMatchObject({ status: 400, param: "top_k" });
    expect((openai as { message: string }).message).toMatch(/must be an integer from -1 to 1048576, not -2/);
    const seed = await infer({ seed: 2 ** 53 });
    expect(seed.status).toBe(400);
    expect((await seed.json()).error).toMatch(/'seed' must be an integer from -9007199254740991 to 9007199254740991/);
  });
});
