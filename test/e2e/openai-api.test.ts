import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { request } from "undici";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { encoderReference } from "../../models/encoder.ts";
import { credentials, loadPackageDefinition } from "@grpc/grpc-js";
import type { Client } from "@grpc/grpc-js";
import type { Duplex } from "node:stream";
import { loadSync } from "@grpc/proto-loader";

// The OpenAI API on the example decoder (functions/tiny_gpt), driven by OpenAI's own npm client:
// chat and completions, streaming and not, the models list, and its typed errors.

let server: TestServer;
let client: OpenAI;
beforeAll(async () => {
  server = await startServer({ repository: tempRepository("tiny_gpt", "tiny_embed", "simple"), controlMode: "explicit", loadModels: ["tiny_gpt", "tiny_embed", "simple"], grpc: true });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe("OpenAI's API on a generator", () => {
  it("lists the generators as models", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id).sort()).toEqual(["tiny_embed", "tiny_gpt"]);
  });

  it("answers a chat completion, and the same one streamed, token for token", async () => {
    const messages = [{ role: "user" as const, content: "What is the capital of France?" }];
    const whole = await client.chat.completions.create({ model: "tiny_gpt", messages, max_tokens: 24, temperature: 0 });
    expect(whole.object).toBe("chat.completion");
    expect(whole.choices[0]!.finish_reason).toBe("length");
    expect(whole.usage!.completion_tokens).toBe(24);
    expect(whole.usage!.prompt_tokens).toBeGreaterThan(10);
    const text = whole.choices[0]!.message.content!;
    expect(text.length).toBeGreaterThan(5);
    const stream = await client.chat.completions.create({ model: "tiny_gpt", messages, max_tokens: 24, temperature: 0, stream: true, stream_options: { include_usage: true } });
    let streamed = "";
    let finish: string | null = null;
    let usage;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        streamed += choice.delta.content ?? "";
        finish = choice.finish_reason ?? finish;
      }
    }
    expect(streamed).toBe(text);
    expect(finish).toBe("length");
    expect(usage).toEqual(whole.usage);
    expect(chunks).toBeGreaterThan(5);
  });

  it("completes a prompt with stop strings, n choices, seeds and logprobs", async () => {
    const base = await client.completions.create({ model: "tiny_gpt", prompt: "Once upon a time", max_tokens: 30, temperature: 0 });
    const text = base.choices[0]!.text;
    const stop = text.slice(8, 10);
    const stopped = await client.completions.create({ model: "tiny_gpt", prompt: "Once upon a time", max_tokens: 30, temperature: 0, stop: [stop] });
    expect(stopped.choices[0]).toMatchObject({ text: text.slice(0, text.indexOf(stop)), finish_reason: "stop" });
    const sampled = await client.completions.create({ model: "tiny_gpt", prompt: ["Hello", "World"], max_tokens: 8, temperature: 1, seed: 7, n: 2, logprobs: 2 });
    expect(sampled.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    for (const c of sampled.choices) {
      expect(c.logprobs!.tokens).toHaveLength(8);
      expect(c.logprobs!.token_logprobs!.every((lp) => lp! <= 0)).toBe(true);
      // As many alternatives as asked, at every position.
      expect(c.logprobs!.top_logprobs!.map((top) => Object.keys(top!).length)).toEqual(Array(8).fill(2));
    }
    const again = await client.completions.create({ model: "tiny_gpt", prompt: ["Hello", "World"], max_tokens: 8, temperature: 1, seed: 7, n: 2 });
    expect(again.choices.map((c) => c.text)).toEqual(sampled.choices.map((c) => c.text));
    // Sampling, not greedy decoding: another seed gives other texts, and the n choices of one prompt differ.
    const long = (seed: number) => client.completions.create({ model: "tiny_gpt", prompt: "Hello", max_tokens: 24, temperature: 1, seed, n: 2 });
    const [seven, eight] = await Promise.all([long(7), long(8)]);
    expect(seven.choices.map((c) => c.text)).not.toEqual(eight.choices.map((c) => c.text));
    expect(seven.choices[0]!.text).not.toBe(seven.choices[1]!.text);
    const greedy = await client.completions.create({ model: "tiny_gpt", prompt: "Hello", max_tokens: 24, temperature: 0 });
    expect(seven.choices.map((c) => c.text)).not.toContain(greedy.choices[0]!.text);
  });

  it("raises OpenAI's typed errors, naming the field", async () => {
    await expect(client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "hi" }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.chat.completions.create({ model: "simple", messages: [{ role: "user", content: "hi" }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const error = await client.completions.create({ model: "tiny_gpt", prompt: "hi", temperature: 9 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, param: "temperature", type: "invalid_request_error" });
    await expect(client.completions.create({ model: "tiny_gpt", prompt: "hi", max_tokens: 100_000 })).rejects.toMatchObject({ status: 400, param: "max_tokens" });
  });

  it("answers what the generators cannot do (tools, response_format, suffix…) with a 400 naming the field, as vLLM: the client does not retry it", async () => {
    // The client as users make it: its default retries (two, with back-off) are spent on a 5xx, never a 400.
    const retrying = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused" });
    const messages = [{ role: "user" as const, content: "hi" }];
    const tool = { type: "function" as const, function: { name: "f", parameters: { type: "object" } } };
    for (const [call, param] of [
      [() => retrying.chat.completions.create({ model: "tiny_gpt", messages, tools: [tool] }), "tools"],
      [() => retrying.chat.completions.create({ model: "tiny_gpt", messages, tool_choice: "required" }), "tool_choice"],
      [() => retrying.chat.completions.create({ model: "tiny_gpt", messages, response_format: { type: "json_object" } }), "response_format"],
      [() => retrying.completions.create({ model: "tiny_gpt", prompt: "hi", suffix: "!" }), "suffix"],
      [() => retrying.completions.create({ model: "tiny_gpt", prompt: "hi", best_of: 3 }), "best_of"],
    ] as const) {
      const started = performance.now();
      const error = await (call as () => Promise<unknown>)().catch((e: unknown) => e);
      expect(error, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param, type: "invalid_request_error", message: expect.stringContaining(`${param}: is not supported`) });
      expect(performance.now() - started).toBeLessThan(400);
    }
    // What asks for nothing more is served: no tools, plain text.
    const plain = await retrying.chat.completions.create({ model: "tiny_gpt", messages, max_tokens: 2, tools: [], tool_choice: "none", response_format: { type: "text" } });
    expect(plain.usage!.completion_tokens).toBe(2);
  });

  it("answers Triton's generate and generate_stream as Triton's vLLM backend does (text_input → text_output)", async () => {
    const body = { text_input: "Once upon a time", parameters: { max_tokens: 10, temperature: 0 } };
    const whole = await (await fetch(`${server.url}/v2/models/tiny_gpt/generate`, { method: "POST", body: JSON.stringify(body) })).json();
    const completion = await client.completions.create({ model: "tiny_gpt", prompt: "Once upon a time", max_tokens: 10, temperature: 0 });
    expect(whole).toEqual({ model_name: "tiny_gpt", model_version: "1", text_output: `Once upon a time${completion.choices[0]!.text}` });
    const sse = await (await fetch(`${server.url}/v2/models/tiny_gpt/generate_stream`, { method: "POST", body: JSON.stringify({ ...body, exclude_input_in_output: true }) })).text();
    const pieces = sse.split("\n\n").filter(Boolean).map((e) => JSON.parse(e.slice("data: ".length)).text_output);
    expect(pieces.join("")).toBe(completion.choices[0]!.text);
    const refused = await fetch(`${server.url}/v2/models/tiny_gpt/generate`, { method: "POST", body: JSON.stringify({ text_input: "x", parameters: { top_p: 0 } }) });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatch(/^top_p: must be a number/);
    // sampling_parameters that is JSON but not an object, or parameters that are not one: refused, not ignored.
    for (const [field, value] of [["sampling_parameters", "5"], ["sampling_parameters", "[1]"], ["sampling_parameters", "null"], ["sampling_parameters", 7], ["parameters", "max_tokens"], ["parameters", [1]]] as const) {
      const answer = await fetch(`${server.url}/v2/models/tiny_gpt/generate`, { method: "POST", body: JSON.stringify({ text_input: "x", [field]: value }) });
      expect(answer.status, `${field}: ${JSON.stringify(value)}`).toBe(400);
      expect((await answer.json()).error).toMatch(new RegExp(`^${field}: must be`));
    }
    const asText = await fetch(`${server.url}/v2/models/tiny_gpt/generate`, { method: "POST", body: JSON.stringify({ text_input: "Once upon a time", sampling_parameters: JSON.stringify({ max_tokens: 10, temperature: 0 }) }) });
    expect(await asText.json()).toEqual(whole);
  });

  it("echoes the prompt with its tokens' logprobs (the first none), offsets counted from the prompt's start, and scores a prompt alone with max_tokens 0", async () => {
    const ids = [72, 101, 108, 108, 111];
    // What the model gives five greedy tokens after the prompt, and their logprobs.
    const res = await fetch(`${server.url}/v2/models/tiny_gpt/infer`, { method: "POST", body: JSON.stringify({ parameters: { max_tokens: 5, temperature: 0 }, inputs: [{ name: "input_ids", datatype: "INT64", shape: [ids.length], data: ids }] }) });
    const generated = Object.fromEntries(((await res.json()).outputs as { name: string; data: number[] }[]).map((o) => [o.name, o.data]));
    // The prompt and those tokens scored as one prompt: its last five logprobs are theirs (prefill, not decode: within float noise).
    const scored = await client.completions.create({ model: "tiny_gpt", prompt: [...ids, ...generated.output_ids!], max_tokens: 0, echo: true, logprobs: 2, temperature: 0 });
    const lp = scored.choices[0]!.logprobs!;
    expect(scored.choices[0]!.finish_reason).toBe("length");
    expect(scored.usage!.completion_tokens).toBe(0);
    expect(lp.tokens).toHaveLength(ids.length + 5);
    expect(lp.token_logprobs![0]).toBeNull();
    expect(lp.top_logprobs![0]).toBeNull();
    lp.token_logprobs!.slice(ids.length).forEach((v, i) => expect(v).toBeCloseTo(generated.logprobs![i]!, 3));
    expect(lp.top_logprobs!.slice(1).every((top) => Object.keys(top!).length === 2)).toBe(true);
    expect(lp.text_offset![0]).toBe(0);
    lp.text_offset!.slice(1).forEach((o, i) => expect(o).toBe(lp.text_offset![i]! + lp.tokens![i]!.length));
    // A completion with echo: the prompt's tokens first, the generated ones after, offsets running on.
    const echoed = await client.completions.create({ model: "tiny_gpt", prompt: "Hello", max_tokens: 3, echo: true, logprobs: 0, temperature: 0 });
    const plain = await client.completions.create({ model: "tiny_gpt", prompt: "Hello", max_tokens: 3, logprobs: 0, temperature: 0 });
    const e = echoed.choices[0]!.logprobs!;
    expect(echoed.choices[0]!.text).toBe(`Hello${plain.choices[0]!.text}`);
    expect(e.tokens!.slice(-3)).toEqual(plain.choices[0]!.logprobs!.tokens);
    expect(e.text_offset!.slice(-3)).toEqual(plain.choices[0]!.logprobs!.text_offset!.map((o) => o + "Hello".length));
    expect(e.token_logprobs!.slice(-3).map((v) => v!.toFixed(4))).toEqual(plain.choices[0]!.logprobs!.token_logprobs!.map((v) => v!.toFixed(4)));
    // Without echo, max_tokens 0 is still refused.
    await expect(client.completions.create({ model: "tiny_gpt", prompt: "Hello", max_tokens: 0 })).rejects.toMatchObject({ status: 400, param: "max_tokens" });
  });

  it("answers KServe's infer with every token at once, sampling from request parameters, and refuses a token the model lacks with 400", async () => {
    const ids = [72, 101, 108, 108, 111];
    const infer = async (parameters: Record<string, unknown>, data = ids) =>
      fetch(`${server.url}/v2/models/tiny_gpt/infer`, { method: "POST", body: JSON.stringify({ parameters, inputs: [{ name: "input_ids", datatype: "INT64", shape: [data.length], data }] }) });
    const res = await infer({ max_tokens: 6, temperature: 0 });
    expect(res.status).toBe(200);
    const outputs = Object.fromEntries(((await res.json()).outputs as { name: string; data: unknown[] }[]).map((o) => [o.name, o.data]));
    expect(outputs.output_ids).toHaveLength(6);
    expect(outputs.finish_reason).toEqual(["length"]);
    const completion = await client.completions.create({ model: "tiny_gpt", prompt: ids, max_tokens: 6, temperature: 0, logprobs: 0 });
    expect(completion.choices[0]!.logprobs!.token_logprobs).toEqual((outputs.logprobs as number[]).map((v) => expect.closeTo(v, 5)));
    const wrong = await infer({}, [72, 99999]);
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error).toMatch(/input_ids\[1\] is 99999, not a token of the model/);
    expect((await infer({ temperature: 3 })).status).toBe(400);
    // Sampling from the request's parameters: a seed gives the same tokens again, another seed others.
    const sampledIds = async (seed: number) => ((await (await infer({ max_tokens: 24, temperature: 1, seed })).json()).outputs as { name: string; data: number[] }[]).find((o) => o.name === "output_ids")!.data;
    const [a, b, c] = await Promise.all([sampledIds(11), sampledIds(11), sampledIds(12)]);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(a).not.toEqual(((await (await infer({ max_tokens: 24, temperature: 0 })).json()).outputs as { name: string; data: number[] }[]).find((o) => o.name === "output_ids")!.data);
  });

  it("parks (its KV cache freed, no longer in its memory) and wakes on the next request", async () => {
    const hostBytes = async () => Number((await (await fetch(`${server.url}/metrics`)).text()).match(/^tensorfn_memory_bytes\{model="tiny_gpt",version="1",memory="host"\} (\d+)/m)?.[1]);
    const ready = await hostBytes();
    // functions/tiny_gpt's kv_cache_bytes: 16 MiB, counted while it is in memory.
    expect(ready).toBeGreaterThan(16 * 1024 * 1024);
    expect((await fetch(`${server.url}/v2/repository/models/tiny_gpt/park`, { method: "POST" })).status).toBe(200);
    expect(ready - (await hostBytes())).toBeGreaterThanOrEqual(16 * 1024 * 1024);
    const answer = await client.completions.create({ model: "tiny_gpt", prompt: "Hello", max_tokens: 4, temperature: 0 });
    expect(answer.usage!.completion_tokens).toBe(4);
    // Awake: the cache counts again (the kept model may now be onnxruntime's optimised form, of another size).
    expect(await hostBytes()).toBeGreaterThan(16 * 1024 * 1024);
  });

  it("embeds text and token ids as the reference encoder does, as floats and base64, cut to dimensions", async () => {
    const texts = ["Hello, world!", "The capital of France is Paris.", "a"];
    // OpenAI's client asks for base64 and decodes it; its vectors must be the reference's, unit length.
    const answer = await client.embeddings.create({ model: "tiny_embed", input: texts });
    expect(answer.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(answer.usage.prompt_tokens).toBeGreaterThan(5);
    const ids = await (await fetch(`${server.url}/v1/embeddings`, { method: "POST", body: JSON.stringify({ model: "tiny_embed", input: [[72, 101, 108, 108, 111]], encoding_format: "float" }) })).json();
    const reference = encoderReference([72, 101, 108, 108, 111]);
    const norm = Math.hypot(...reference);
    ids.data[0].embedding.forEach((v: number, i: number) => expect(v).toBeCloseTo(reference[i]! / norm, 5));
    for (const d of answer.data) expect(Math.hypot(...d.embedding)).toBeCloseTo(1, 5);
    // The same text alone or padded beside longer ones: the same vector.
    const alone = await client.embeddings.create({ model: "tiny_embed", input: "a", encoding_format: "float" });
    alone.data[0]!.embedding.forEach((v, i) => expect(v).toBeCloseTo(answer.data[2]!.embedding[i]!, 5));
    const cut = await client.embeddings.create({ model: "tiny_embed", input: "a", dimensions: 8, encoding_format: "float" });
    expect(cut.data[0]!.embedding).toHaveLength(8);
    expect(Math.hypot(...cut.data[0]!.embedding)).toBeCloseTo(1, 5);
    await expect(client.embeddings.create({ model: "tiny_embed", input: "" })).rejects.toMatchObject({ status: 400, param: "input" });
    // Longer than the encoder's 512 positions (its config.json): refused before the model sees it.
    await expect(client.embeddings.create({ model: "tiny_embed", input: [Array(600).fill(5)] })).rejects.toMatchObject({ status: 400, param: "input[0]" });
    await expect(client.embeddings.create({ model: "tiny_gpt", input: "a" })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("streams a generation over gRPC's ModelStreamInfer, a response per token, sampling from its parameters", async () => {
    const proto = new URL("../../runtime/grpc/proto/", import.meta.url).pathname;
    const definition = loadSync(["grpc_service.proto"], { includeDirs: [proto, new URL("../../runtime/config/proto/", import.meta.url).pathname], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
    const { inference } = loadPackageDefinition(definition) as unknown as { inference: { GRPCInferenceService: new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => Client } };
    const client = new inference.GRPCInferenceService(server.grpc!, credentials.createInsecure());
    const duplex = (client as unknown as { ModelStreamInfer(): Duplex }).ModelStreamInfer();
    const tokens: number[] = [];
    const done = new Promise<void>((resolve, reject) => {
      duplex.on("data", (m: { error_message: string; infer_response: { outputs: { name: string }[]; raw_output_contents: Buffer[] } }) => {
        if (m.error_message) return reject(new Error(m.error_message));
        const at = m.infer_response.outputs.findIndex((o) => o.name === "output_ids");
        const raw = m.infer_response.raw_output_contents[at]!;
        tokens.push(...Array.from(new BigInt64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength)), Number));
        if (tokens.length === 12) duplex.end();
      });
      duplex.on("end", resolve);
      duplex.on("error", reject);
    });
    const ids = [72, 101, 108, 108, 111];
    // Sampled with a seed: the same parameters over KServe give the same tokens; greedy ones differ.
    duplex.write({ model_name: "tiny_gpt", id: "g1", parameters: { max_tokens: { int64_param: 12 }, temperature: { double_param: 1 }, seed: { int64_param: 21 } }, inputs: [{ name: "input_ids", datatype: "INT64", shape: [ids.length] }], raw_input_contents: [Buffer.from(BigInt64Array.from(ids, BigInt).buffer)] });
    await done;
    client.close();
    const over = async (parameters: object) => (await (await fetch(`${server.url}/v2/models/tiny_gpt/infer`, { method: "POST", body: JSON.stringify({ parameters, inputs: [{ name: "input_ids", datatype: "INT64", shape: [5], data: ids }] }) })).json()).outputs[0].data;
    expect(tokens).toEqual(await over({ max_tokens: 12, temperature: 1, seed: 21 }));
    expect(tokens).not.toEqual(await over({ max_tokens: 12, temperature: 0 }));
  });

  it("a client that drops a stream frees its sequence", async () => {
    const metrics = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const value = (pattern: RegExp) => Number(text.match(pattern)?.[1] ?? 0);
      return {
        running: value(/^vllm:num_requests_running\{model_name="tiny_gpt"\} (\d+)/m),
        aborted: value(/^vllm:request_success_total\{model_name="tiny_gpt",finished_reason="abort"\} (\d+)/m),
        tokens: value(/^vllm:generation_tokens_total\{model_name="tiny_gpt"\} (\d+)/m),
      };
    };
    const before = await metrics();
    const res = await request(`${server.url}/v1/completions`, { method: "POST", body: JSON.stringify({ model: "tiny_gpt", prompt: "a", max_tokens: 1500, stream: true, ignore_eos: true }) });
    expect(res.statusCode).toBe(200);
    const reader = res.body[Symbol.asyncIterator]();
    await reader.next();
    res.body.destroy();
    let after = await metrics();
    for (let i = 0; i < 100 && after.running !== 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = await metrics();
    }
    expect(after.running).toBe(0);
    // Freed because the client left, not because it ran out: counted as aborted, far short of its 1500 tokens.
    expect(after.aborted).toBe(before.aborted + 1);
    expect(after.tokens - before.tokens).toBeLessThan(750);
  });
});

describe("a generator's admission over HTTP", () => {
  let small: TestServer;
  beforeAll(async () => {
    const repo = tempRepository("tiny_gpt");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${repo}/tiny_gpt/function.yaml`, "generation: { max_num_seqs: 2, max_num_batched_tokens: 64, max_waiting_requests: 2, kv_cache_bytes: 4194304 }\n");
    small = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["tiny_gpt"] });
  }, 60_000);
  afterAll(async () => {
    await small?.close();
  });

  it("refuses beyond max_waiting_requests at once with 503 and Retry-After, in OpenAI's shape, and serves the rest", async () => {
    const body = (i: number) => JSON.stringify({ model: "tiny_gpt", prompt: `x${i}`, max_tokens: 200, ignore_eos: true });
    const answers = await Promise.all(Array.from({ length: 8 }, async (_, i) => {
      const started = performance.now();
      const res = await fetch(`${small.url}/v1/completions`, { method: "POST", body: body(i) });
      return { status: res.status, retry: res.headers.get("retry-after"), json: await res.json(), ms: performance.now() - started };
    }));
    const refused = answers.filter((a) => a.status === 503);
    // Two wait (and up to two run, when the loop started them before the others arrived): the rest are refused.
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused.length).toBeLessThanOrEqual(6);
    for (const r of refused) {
      expect(r.retry).toBe("1");
      expect(r.json.error).toMatchObject({ type: "server_error", message: expect.stringMatching(/max_waiting_requests/) });
    }
    expect(answers.filter((a) => a.status === 200).every((a) => a.json.usage.completion_tokens === 200)).toBe(true);
    expect(Math.max(...refused.map((r) => r.ms))).toBeLessThan(Math.min(...answers.filter((a) => a.status === 200).map((a) => a.ms)));
  });
});

describe("a generator behind API keys", () => {
  let keyed: TestServer;
  beforeAll(async () => {
    keyed = await startServer({ repository: tempRepository("tiny_gpt"), controlMode: "explicit", loadModels: ["tiny_gpt"], apiKeys: ["sk-test-key"] });
  }, 60_000);
  afterAll(async () => {
    await keyed?.close();
  });

  it("serves OpenAI's client with its key, and raises AuthenticationError without one", async () => {
    const good = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: "sk-test-key", maxRetries: 0 });
    expect((await good.completions.create({ model: "tiny_gpt", prompt: "hi", max_tokens: 2 })).usage!.completion_tokens).toBe(2);
    const wrong = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: "sk-wrong", maxRetries: 0 });
    const error = await wrong.chat.completions.create({ model: "tiny_gpt", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({ type: "authentication_error" });
    await expect(wrong.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
