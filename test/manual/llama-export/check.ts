/**
 * Serves the exported Llama (run.sh made the repository) and compares its greedy tokens, each
 * prompt alone and all at once, with transformers' own; then one chat completion.
 *   npx tsx test/manual/llama-export/check.ts <repository> <reference.json>
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const [repository, referenceFile] = process.argv.slice(2);
const reference = JSON.parse(readFileSync(referenceFile!, "utf8")) as { prompts: number[][]; greedy: number[][] };
const port = 18210;
const server = spawn(process.execPath, ["adapters/node/bin.mjs", "serve", "--repo", repository!, "--port", String(port), "--model-control-mode", "explicit", "--load-model", "llama"], { stdio: ["ignore", "ignore", "inherit"] });
const url = `http://127.0.0.1:${port}`;
try {
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${url}/v2/health/ready`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const run = async (prompt: number[]) => {
    const body = { parameters: { max_tokens: reference.greedy[0]!.length }, inputs: [{ name: "input_ids", datatype: "INT64", shape: [prompt.length], data: prompt }] };
    const answer = await (await fetch(`${url}/v2/models/llama/infer`, { method: "POST", body: JSON.stringify(body) })).json();
    return answer.outputs[0].data as number[];
  };
  const alone: number[][] = [];
  for (const prompt of reference.prompts) alone.push(await run(prompt));
  const together = await Promise.all(reference.prompts.map(run));
  const same = (a: number[][]) => JSON.stringify(a) === JSON.stringify(reference.greedy);
  console.log(`transformers: ${JSON.stringify(reference.greedy)}\nalone:        ${JSON.stringify(alone)}\ntogether:     ${JSON.stringify(together)}`);
  console.log(same(alone) && same(together) ? "MATCH: tensorfn's tokens are transformers' own" : "DIFFER");
  const chat = await (await fetch(`${url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "llama", messages: [{ role: "user", content: "Hi" }], max_tokens: 8, temperature: 0 }) })).json();
  console.log(`chat: ${JSON.stringify(chat.choices[0])}`);
  process.exitCode = same(alone) && same(together) ? 0 : 1;
} finally {
  server.kill();
}
