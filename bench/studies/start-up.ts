// Study: what loading tensorfn's own TypeScript costs a start and a worker thread, compiled ahead
// (adapters/node/compiled-sources.mjs, what bin.mjs runs) against the sources through the module
// loader hooks (bin.mjs's fallback). Interleaved rounds, medians.
//   npx tsx bench/studies/start-up.ts [rounds=5] [functions=200]
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { spawnServer } from "../../harness/server-process.ts";
import { compiledSources } from "../../adapters/node/compiled-sources.mjs";
import { createNodePlatform } from "../../adapters/node/platform.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const rounds = Number(process.argv[2] ?? 5);
const functions = Number(process.argv[3] ?? 200);

// bin.mjs's fallback, as it is there.
const FROM_SOURCES = `
const { registerTypeScript } = await import(${JSON.stringify(pathToFileURL(join(ROOT, "adapters/node/register-typescript.mjs")).href)});
registerTypeScript();
const { runCli } = await import(${JSON.stringify(pathToFileURL(join(ROOT, "adapters/cli.ts")).href)});
const { nodeHost } = await import(${JSON.stringify(pathToFileURL(join(ROOT, "adapters/node/cli.ts")).href)});
await runCli(nodeHost(process.argv.slice(1)));`;

const repo = mkdtempSync(join(tmpdir(), "tensorfn-start-up-"));
for (let i = 0; i < functions; i++) cpSync(join(ROOT, "functions", "simple"), join(repo, `fn_${String(i).padStart(3, "0")}`), { recursive: true });
const serve = ["serve", "--repo", repo, "--port", "0"];
const starts = {
  compiled: ["node", [join(ROOT, "adapters/node/bin.mjs"), ...serve]],
  sources: ["node", ["--input-type=module", "-e", FROM_SOURCES, ...serve]],
} as const;

const compiled = await compiledSources();
if (!compiled) throw new Error("the sources could not be compiled here");
const workerSource = new URL("runtime/backends/onnxruntime-worker.ts", pathToFileURL(ROOT));
const platforms = { compiled: createNodePlatform(undefined, { compiled }), sources: createNodePlatform() };

/** From `new Worker` to the answer to its first message (the module loaded and listening). */
async function workerReady(platform: ReturnType<typeof createNodePlatform>): Promise<number> {
  const started = performance.now();
  const worker = platform.startWorker!(workerSource);
  await new Promise<void>((resolve) => {
    worker.onMessage(() => resolve());
    worker.postMessage({ id: 1, op: "release" });
  });
  const ms = performance.now() - started;
  await worker.terminate();
  return ms;
}

const times: Record<string, number[]> = { "start compiled": [], "start sources": [], "worker compiled": [], "worker sources": [] };
for (let round = 0; round < rounds; round++) {
  for (const [name, [command, args]] of Object.entries(starts)) {
    const started = performance.now();
    const server = await spawnServer(command, [...args]);
    times[`start ${name}`]!.push(performance.now() - started);
    await server.stop();
  }
  for (const [name, platform] of Object.entries(platforms)) times[`worker ${name}`]!.push(await workerReady(platform));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${rounds} interleaved rounds; start = spawn to the URL line with ${functions} functions (lazy mode); worker = new Worker to its first answer`);
for (const [name, xs] of Object.entries(times)) console.log(`${name.padEnd(18)} median ${median(xs).toFixed(0)} ms  (${xs.map((x) => x.toFixed(0)).join(", ")})`);
