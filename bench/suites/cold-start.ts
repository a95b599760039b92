/**
 * `npm run bench:cold-start`: how long a process takes to serve, from spawn, as ratios to bare
 * processes spawned beside it in the same run (Node, Bun, Deno):
 *
 * - a bare `node:http` server (spawn → its first answer): what "started" costs any server;
 * - `tensorfn serve` with `simple` alone (`--model-control-mode none`): spawn → live
 *   (`/v2/health/live` answers), spawn → ready (`/v2/health/ready` 200: `simple` loaded);
 * - `tensorfn serve` with `resnet` (46 MB) in lazy mode: spawn → the first inference's answer,
 *   against a bare script that imports onnxruntime-node, creates the session and runs it once;
 * - `tensorfn --version`: the CLI's start alone;
 * - the ceiling's parts: `node -e 0` (the runtime's own start) and a script that only imports
 *   onnxruntime-node (its native library's load), which no server can go below.
 *
 * Every subject runs ROUNDS times, interleaved (one of each per round), and its median is kept.
 * Writes bench/results/cold-start.md.
 *
 *   npm run bench:cold-start [-- --quick] [-- --runtimes node,bun]
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { writeResultsSection } from "./results-section.ts";
import { median } from "./median-round.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({ options: { quick: { type: "boolean", default: false }, runtimes: { type: "string", default: "node,bun,deno" } } });
const ROUNDS = values.quick ? 3 : 7;
const RUNTIMES = values.runtimes!.split(",") as Runtime[];
const log = (line: string) => void process.stderr.write(`${line}\n`);
type Runtime = "node" | "bun" | "deno";

const scratch = mkdtempSync(join(tmpdir(), "tensorfn-cold-start-"));
const repos = { simple: join(scratch, "simple-repo"), resnet: join(scratch, "resnet-repo") };
cpSync(join(ROOT, "functions", "simple"), join(repos.simple, "simple"), { recursive: true });
cpSync(join(ROOT, "functions", "resnet"), join(repos.resnet, "resnet"), { recursive: true });
const RESNET_MODEL = join(ROOT, "functions", "resnet", "1", "model.onnx");

// The bare processes, as files inside the project (so that Deno and Bun resolve onnxruntime-node
// from its node_modules as Node does). Each prints a line when it is done.
const BARE_SERVER = join(ROOT, "bench", ".scratch", "cold-bare-server.mjs");
const BARE_ORT = join(ROOT, "bench", ".scratch", "cold-bare-ort.mjs");
const IMPORT_ORT = join(ROOT, "bench", ".scratch", "cold-import-ort.mjs");
const BARE_SIMPLE_SERVER = join(ROOT, "bench", ".scratch", "cold-bare-simple-server.mjs");
const SIMPLE_MODEL = join(ROOT, "functions", "simple", "1", "model.onnx");
writeFile(BARE_SERVER, `import { createServer } from "node:http";\nconst port = Number(process.argv[2]);\ncreateServer((_, res) => res.end("ok")).listen(port, "127.0.0.1");\n`);
writeFile(
  BARE_ORT,
  `import { readFile } from "node:fs/promises";\nimport ort from "onnxruntime-node";\nconst session = await ort.InferenceSession.create(await readFile(${JSON.stringify(RESNET_MODEL)}));\n` +
    `await session.run({ input: new ort.Tensor("float32", new Float32Array(3 * 224 * 224), [1, 3, 224, 224]) });\nconsole.log("done");\nprocess.exit(0);\n`,
);
// The hand-written server a user would compare with: simple's session made, one run, then listen.
writeFile(
  BARE_SIMPLE_SERVER,
  `import { createServer } from "node:http";\nimport { readFile } from "node:fs/promises";\nimport ort from "onnxruntime-node";\n` +
    `const session = await ort.InferenceSession.create(await readFile(${JSON.stringify(SIMPLE_MODEL)}));\n` +
    `const feeds = { INPUT0: new ort.Tensor("int32", new Int32Array(16), [1, 16]), INPUT1: new ort.Tensor("int32", new Int32Array(16), [1, 16]) };\nawait session.run(feeds);\n` +
    `createServer((_, res) => res.end("ok")).listen(Number(process.argv[2]), "127.0.0.1");\n`,
);
writeFile(IMPORT_ORT, `import ort from "onnxruntime-node";\nconsole.log(typeof ort.InferenceSession);\nprocess.exit(0);\n`);

function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);
/** How each runtime runs a script, and tensorfn's CLI. */
const RUN: Record<Runtime, { script: (file: string, args: string[]) => string[]; eval0: string[]; cli: (args: string[]) => string[] }> = {
  node: { script: (f, a) => ["node", f, ...a], eval0: ["node", "-e", "0"], cli: (a) => ["node", join(ROOT, "adapters/node/bin.mjs"), ...a] },
  bun: { script: (f, a) => [bin("bun"), f, ...a], eval0: [bin("bun"), "-e", "0"], cli: (a) => [bin("bun"), join(ROOT, "adapters/bun/main.ts"), ...a] },
  deno: {
    script: (f, a) => [bin("deno"), "run", "-A", f, ...a],
    eval0: [bin("deno"), "eval", "0"],
    cli: (a) => [bin("deno"), "run", "-A", "--unstable-no-legacy-abort", join(ROOT, "adapters/deno/main.ts"), ...a],
  },
};

async function freePort(): Promise<number> {
  return await new Promise((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

const RESNET_BODY = (() => {
  const header = new TextEncoder().encode(JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 3, 224, 224], parameters: { binary_data_size: 3 * 224 * 224 * 4 } }] }));
  const body = new Uint8Array(header.length + 3 * 224 * 224 * 4);
  body.set(header);
  return { body, headerLength: header.length };
})();

/**
 * Spawns `command` and measures, from the spawn, each probe's first success (polled every 5 ms);
 * `exit`: the time the process exits with status 0 instead. Killed once done.
 */
async function measure(command: string[], probes: Record<string, () => Promise<boolean>>, options: { exit?: boolean } = {}): Promise<Record<string, number>> {
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), { stdio: ["ignore", "ignore", "pipe"], cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<number>((done) => child.on("exit", (code) => done(code ?? -1)));
  const marks: Record<string, number> = {};
  try {
    if (options.exit) {
      const code = await exited;
      if (code !== 0) throw new Error(`${command.join(" ")} exited ${code}: ${stderr.slice(-500)}`);
      return { exit: performance.now() - started };
    }
    let gone = false;
    void exited.then(() => (gone = true));
    while (Object.keys(marks).length < Object.keys(probes).length) {
      if (gone) throw new Error(`${command.join(" ")} exited before it served: ${stderr.slice(-500)}`);
      if (performance.now() - started > 60_000) throw new Error(`${command.join(" ")} did not serve within 60 s`);
      for (const [name, probe] of Object.entries(probes)) {
        if (marks[name] === undefined && (await probe().catch(() => false))) marks[name] = performance.now() - started;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    return marks;
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

const ok = (url: string, init?: RequestInit) => async () => (await fetch(url, init)).status === 200;
const inferResnet = (port: number) => async () => {
  const res = await fetch(`http://127.0.0.1:${port}/v2/models/resnet/infer`, {
    method: "POST",
    body: RESNET_BODY.body,
    headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(RESNET_BODY.headerLength) },
  });
  await res.arrayBuffer();
  return res.status === 200;
};

/** One round of every subject on `runtime`: name → milliseconds. */
async function round(runtime: Runtime): Promise<Record<string, number>> {
  const run = RUN[runtime];
  const out: Record<string, number> = {};
  let port = await freePort();
  out.bare = (await measure(run.script(BARE_SERVER, [String(port)]), { live: ok(`http://127.0.0.1:${port}/`) })).live!;
  out.eval0 = (await measure(run.eval0, {}, { exit: true })).exit!;
  out.importOrt = (await measure(run.script(IMPORT_ORT, []), {}, { exit: true })).exit!;
  port = await freePort();
  out.bareSimple = (await measure(run.script(BARE_SIMPLE_SERVER, [String(port)]), { live: ok(`http://127.0.0.1:${port}/`) })).live!;
  out.version = (await measure(run.cli(["--version"]), {}, { exit: true })).exit!;
  port = await freePort();
  const simple = await measure(run.cli(["serve", "--repo", repos.simple, "--port", String(port), "--model-control-mode", "none"]), {
    live: ok(`http://127.0.0.1:${port}/v2/health/live`),
    ready: ok(`http://127.0.0.1:${port}/v2/health/ready`),
  });
  out.simpleLive = simple.live!;
  out.simpleReady = simple.ready!;
  out.bareOrt = (await measure(run.script(BARE_ORT, []), {}, { exit: true })).exit!;
  port = await freePort();
  out.resnetFirst = (await measure(run.cli(["serve", "--repo", repos.resnet, "--port", String(port)]), { answer: inferResnet(port) })).answer!;
  return out;
}

const results: Partial<Record<Runtime, Record<string, number>>> = {};
const samples: Partial<Record<Runtime, Record<string, number[]>>> = {};
for (let r = 1; r <= ROUNDS; r++) {
  for (const runtime of RUNTIMES) {
    const one = await round(runtime);
    const kept = (samples[runtime] ??= {});
    for (const [k, v] of Object.entries(one)) (kept[k] ??= []).push(v);
    log(`round ${r}/${ROUNDS} ${runtime}: ${Object.entries(one).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", ")}`);
  }
}
for (const runtime of RUNTIMES) results[runtime] = Object.fromEntries(Object.entries(samples[runtime]!).map(([k, v]) => [k, median(v)]));

const ms = (v: number) => v.toFixed(0);
const x = (v: number) => `${v.toFixed(2)}×`;
const lines = [
  "## Cold start: from spawn to serving",
  "",
  `Generated by \`npm run bench:cold-start\` (bench/suites/cold-start.ts); rerun to refresh. Each subject spawned ${ROUNDS} times, interleaved`,
  "with the others (one of each per round), the median kept; times from the spawn, the probe polling every 5 ms. The load",
  "generator shares the machine's cores with the process it starts.",
  "",
  `- Date: ${new Date().toISOString()}`,
  `- Runtimes: ${RUNTIMES.map((r) => (r === "node" ? `node ${process.versions.node}` : r)).join(", ")}`,
  "",
  "| runtime | bare node:http server, first answer | tensorfn `simple` live | `simple` ready | ready ÷ bare (target ≤ 1.5) | bare script: resnet create + run | tensorfn resnet first answer | + over the script (target ≤ 150 ms) | `--version` |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...RUNTIMES.map((r) => {
    const m = results[r]!;
    return `| ${r} | ${ms(m.bare!)} ms | ${ms(m.simpleLive!)} ms | ${ms(m.simpleReady!)} ms | ${x(m.simpleReady! / m.bare!)} | ${ms(m.bareOrt!)} ms | ${ms(m.resnetFirst!)} ms | ${ms(m.resnetFirst! - m.bareOrt!)} ms | ${ms(m.version!)} ms |`;
  }),
  "",
  "### The ceiling",
  "",
  "What a process that serves a model cannot go below, measured in the same run: the runtime's own start (`-e 0`), a",
  "script that only imports onnxruntime-node (its native library loaded), and the hand-written server a user would",
  "compare with: onnxruntime-node imported, `simple`'s session created and run once, then `node:http` listening. That",
  "server over the bare one is the ratio the target can reach at best; tensorfn over it is what tensorfn itself adds.",
  "",
  "| runtime | `-e 0` | import onnxruntime-node | hand-written server with `simple`, first answer | ceiling: it ÷ bare server | tensorfn `simple` ready ÷ bare (target 1.5) | tensorfn ÷ hand-written |",
  "|---|---:|---:|---:|---:|---:|---:|",
  ...RUNTIMES.map((r) => {
    const m = results[r]!;
    return `| ${r} | ${ms(m.eval0!)} ms | ${ms(m.importOrt!)} ms | ${ms(m.bareSimple!)} ms | ${x(m.bareSimple! / m.bare!)} | ${x(m.simpleReady! / m.bare!)} | ${x(m.simpleReady! / m.bareSimple!)} |`;
  }),
  "",
];
writeResultsSection("cold-start", lines.join("\n"));
log(lines.join("\n"));
