import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import { DataType, encodeModel, graph, node, valueInfo } from "../../models/onnx-graph.ts";
import { VERSION } from "../../runtime/mod.ts";

const BIN = "adapters/node/bin.mjs";

describe("tensorfn check", () => {
  it("passes the bundled example repository", () => {
    const run = spawnSync("node", [BIN, "check", "functions"], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });

  it("prints file:line: field: problem for each error and exits 1", () => {
    const repo = tempRepository();
    mkdirSync(join(repo, "broken", "1"), { recursive: true });
    writeFileSync(join(repo, "broken", "1", "model.onnx"), "");
    writeFileSync(join(repo, "broken", "function.yaml"), "max_batch_size: 8\nmax_batch_sise: 4\ninput:\n  - { name: x, data_type: TYPE_FLOAT, dims: [4] }\n");
    const run = spawnSync("node", [BIN, "check", repo], { encoding: "utf8" });
    expect(run.status).toBe(1);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toContainEqual(expect.stringMatching(/broken\/function\.yaml:2: max_batch_sise: .*max_batch_size/));
    expect(lines).toContainEqual(expect.stringMatching(/broken\/function\.yaml:4: input\[0\]\.data_type: .*TYPE_FP32/));
  });

  it("opens each model as a load does: a file that is no model, and a config that contradicts its model, each at the line of the tensor — and the load names the same file", async () => {
    const repo = tempRepository("simple");
    cpSync(join(repo, "simple"), join(repo, "dims"), { recursive: true });
    writeFileSync(join(repo, "dims", "function.yaml"), readFileSync(join(repo, "simple", "function.yaml"), "utf8").replace("- { name: INPUT1, data_type: TYPE_INT32, dims: [16] }", "- { name: INPUT1, data_type: TYPE_INT32, dims: [8] }"));
    cpSync(join(repo, "simple"), join(repo, "text"), { recursive: true });
    writeFileSync(join(repo, "text", "1", "model.onnx"), "saved as .onnx, but text\n");
    cpSync(join(repo, "simple"), join(repo, "triton"), { recursive: true });
    rmSync(join(repo, "triton", "function.yaml"));
    writeFileSync(join(repo, "triton", "config.pbtxt"), `platform: "onnxruntime_onnx"\nmax_batch_size: 8\ninput [\n  { name: "INPUT0", data_type: TYPE_INT32, dims: [ 16 ] },\n  { name: "INPUTX", data_type: TYPE_INT32, dims: [ 16 ] }\n]\n`);
    const run = spawnSync("node", [BIN, "check", repo], { encoding: "utf8" });
    expect(run.status).toBe(1);
    const dimsLine = readFileSync(join(repo, "dims", "function.yaml"), "utf8").split("\n").findIndex((l) => l.includes("name: INPUT1")) + 1;
    expect(run.stdout.trim().split("\n")).toEqual([
      `${repo}/dims/function.yaml:${dimsLine}: input 'INPUT1': function.yaml says dims [8] (shape [-1,8]) but model.onnx declares [-1,16]`,
      `${repo}/text/1/model.onnx:0: onnxruntime cannot open it: failed to load model: Failed to load model because protobuf parsing failed.`,
      `${repo}/triton/config.pbtxt:3: model.onnx input 'INPUT1' is missing from config.pbtxt (it lists: INPUT0, INPUTX); list every model input, or none to take them from the model`,
      `${repo}/triton/config.pbtxt:5: config.pbtxt names input 'INPUTX' that model.onnx does not have (it has: INPUT0, INPUT1)`,
    ]);
    // --no-models finds the models but does not open them.
    expect(spawnSync("node", [BIN, "check", "--no-models", repo], { encoding: "utf8" }).stdout.trim()).toBe(`${repo}: ok`);
    const server = await spawnServer("node", [BIN, "serve", "--repo", repo, "--port", "0"]);
    try {
      const res = await fetch(`${server.url}/v2/models/triton/infer`, { method: "POST", body: "{}" });
      expect(await res.text()).toContain("config.pbtxt names input 'INPUTX' that model.onnx does not have");
    } finally {
      await server.stop();
    }
  });

  it("compiles each handler without running it: a syntax error or a missing relative import at file:line:col", () => {
    const repo = tempRepository();
    mkdirSync(join(repo, "fn", "1"), { recursive: true });
    writeFileSync(join(repo, "fn", "function.yaml"), "backend: handler\nhandler: handler.ts\n");
    writeFileSync(join(repo, "fn", "handler.ts"), `import { a } from "./lib.ts";\nimport { b } from "./gone.ts";\nthrow new Error("ran");\nexport const execute = (rs) => rs.map(() => a + b);\n`);
    writeFileSync(join(repo, "fn", "lib.ts"), `export const a = 1 +;\n`);
    const run = spawnSync("node", [BIN, "check", repo], { encoding: "utf8" });
    expect(run.status).toBe(1);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${repo}/fn/lib\\.ts:1:\\d+: Unexpected ";"`)));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${repo}/fn/handler\\.ts:2:\\d+: Could not resolve "\\./gone\\.ts"`)));
    expect(run.stderr).not.toContain("ran");
  });

  it("checks an ensemble's wiring against its steps as a load would, the model's own tensors included, at the step's line", () => {
    const repo = tempRepository("simple", "simple_twice");
    // The ensemble says FP32 where simple (its ONNX model, read by check) takes and gives INT32.
    const yaml = readFileSync(join(repo, "simple_twice", "function.yaml"), "utf8").replace("{ name: A, data_type: TYPE_INT32", "{ name: A, data_type: TYPE_FP32");
    writeFileSync(join(repo, "simple_twice", "function.yaml"), yaml);
    const run = spawnSync("node", [BIN, "check", repo], { encoding: "utf8" });
    expect(run.status).toBe(1);
    const line = yaml.split("\n").findIndex((l) => l.includes("model_name: simple, input_map: { INPUT0: A")) + 1;
    expect(run.stdout.trim().split("\n")).toEqual([`${repo}/simple_twice/function.yaml:${line}: ensemble_scheduling.step[0]: tensor 'A' is TYPE_FP32 at the ensemble's input but TYPE_INT32 at step 0 ('simple') input 'INPUT0'`]);
  });
});

describe("tensorfn check and convert on a Triton repository (config.pbtxt)", () => {
  const PBTXT = `name: "simple"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\ninput [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]\ndynamic_batching { max_queue_delay_microseconds: 100 }\noptimization { cuda { graphs: true } }\n`;

  /** `simple` and `broken`, each with a config.pbtxt instead of its function.yaml. */
  function tritonRepository(broken: string): string {
    const repo = tempRepository("simple", "mlp");
    rmSync(join(repo, "simple", "function.yaml"));
    writeFileSync(join(repo, "simple", "config.pbtxt"), PBTXT);
    renameSync(join(repo, "mlp"), join(repo, "broken"));
    rmSync(join(repo, "broken", "function.yaml"));
    writeFileSync(join(repo, "broken", "config.pbtxt"), broken);
    return repo;
  }

  it("check reports config.pbtxt problems at file:line: field: problem", () => {
    const repo = tritonRepository(`platform: "onnxruntime_onnx"\n\nmax_batch_sise: 8\n`);
    const run = spawnSync("node", [BIN, "check", repo], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stdout.trim().split("\n")).toEqual([`${repo}/broken/config.pbtxt:3: max_batch_sise: unknown field; did you mean 'max_batch_size'?`]);
  });

  it("convert writes a function.yaml beside each config.pbtxt that serves the same config, and reports those that do not convert", async () => {
    const repo = tritonRepository(`platform: "onnxruntime_onnx"\nbatch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "N" data_type: TYPE_INT32 source_input: "x" } ]\n`);
    const run = spawnSync("node", [BIN, "convert", repo], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`${repo}/simple/function.yaml: written (left out, no effect in tensorfn: optimization.cuda)`);
    expect(run.stdout).toContain(`${repo}/broken/config.pbtxt:2: batch_input: batch inputs are not supported`);
    expect(run.stdout).toContain("1 converted, 1 with problems");
    const yaml = readFileSync(join(repo, "simple", "function.yaml"), "utf8");
    expect(yaml).toContain("max_queue_delay_microseconds: 100");
    // Served from the function.yaml now (it wins over config.pbtxt): the same effective config.
    const fromPbtxt = await spawnServer("node", [BIN, "serve", "--repo", tritonRepository(""), "--port", "0"]);
    const fromYaml = await spawnServer("node", [BIN, "serve", "--repo", repo, "--port", "0"]);
    try {
      const config = async (url: string) => {
        const json = (await (await fetch(`${url}/v2/models/simple/config`)).json()) as { parameters: Record<string, unknown> };
        // What execution_thread auto measured differs from one load to the next.
        for (const key of Object.keys(json.parameters)) if (key.startsWith("execution_thread_measured")) delete json.parameters[key];
        return json;
      };
      expect(await config(fromYaml.url)).toEqual(await config(fromPbtxt.url));
    } finally {
      await Promise.all([fromPbtxt.stop(), fromYaml.stop()]);
    }
  });
});

describe("tensorfn serve", () => {
  it("prints its URL once ready, serves, and exits cleanly on SIGTERM", async () => {
    const server = await spawnServer("node", [BIN, "serve", "--repo", tempRepository("simple"), "--port", "0"]);
    const ready = await fetch(`${server.url}/v2/health/ready`);
    expect(ready.status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  it("logs as --log-format and --log-level say: JSON lines, nothing under the level; a bad value exits 2 naming the flag", async () => {
    const repo = tempRepository("simple");
    mkdirSync(join(repo, "typo", "1"), { recursive: true });
    writeFileSync(join(repo, "typo", "function.yaml"), "max_batch_size: 8\ninput: [\n");
    const server = await spawnServer("node", [BIN, "serve", "--repo", repo, "--port", "0", "--log-format", "json", "--log-level=warn"]);
    await server.waitFor(/control routes/); // printed last, just before the SIGTERM handler is installed
    expect((await fetch(`${server.url}/v2/health/live`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    const logged = server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { time: string; level: string; message: string });
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.every((l) => l.level === "warn" || l.level === "error")).toBe(true);
    expect(logged).toContainEqual(expect.objectContaining({ level: "error", message: expect.stringMatching(/typo: invalid configuration/) }));
    expect(server.output()).not.toMatch(/READY on/); // info
    const bad = spawnSync("node", [BIN, "serve", "--repo", repo, "--log-level", "verbose"], { encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--log-level 'verbose' is not one of error, warn, info, debug");
  });

  it("`npm start -- --port N` serves the bundled functions and answers the README's quick-start request", async () => {
    // The request body is the one README.md shows after `npm start`, read from the README itself.
    const readme = readFileSync("README.md", "utf8");
    const curl = /curl -s localhost:8000\/v2\/models\/simple\/infer -d '([^']+)'/.exec(readme);
    expect(curl, "README.md's quick start no longer shows the simple infer curl").not.toBeNull();
    const server = await spawnServer("npm", ["start", "--", "--port", "0"]);
    try {
      const meta = await fetch(`${server.url}/v2/models/simple`);
      expect(meta.status).toBe(200);
      const res = await fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body: curl![1] });
      expect(res.status).toBe(200);
      const [sum, diff] = (await res.json()).outputs;
      const range = Array.from({ length: 16 }, (_, i) => i);
      expect(sum).toEqual({ name: "OUTPUT0", datatype: "INT32", shape: [1, 16], data: range.map((i) => i + 1) });
      expect(diff).toEqual({ name: "OUTPUT1", datatype: "INT32", shape: [1, 16], data: range.map((i) => i - 1) });
    } finally {
      await server.stop();
    }
  });

  it("serves /metrics on its own port with --metrics-port", async () => {
    const server = await spawnServer("node", [BIN, "serve", "--repo", tempRepository("simple"), "--port", "0", "--metrics-port", "0"]);
    try {
      await server.waitFor(/tensorfn metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/);
      const url = /tensorfn metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(server.output())![1]!;
      expect(url).not.toBe(server.url);
      expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^# TYPE nv_inference_count counter$/m);
      expect((await fetch(`${url}/v2/health/live`)).status).toBe(404);
    } finally {
      await server.stop();
    }
  });

  it("writes --trace-file at shutdown", async () => {
    const file = join(tmpdir(), `tensorfn-trace-${process.pid}.json`);
    const spawned = await spawnServer("node", [BIN, "serve", "--repo", tempRepository("simple"), "--port", "0", "--trace-rate", "1", "--trace-file", file]);
    const simple = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) });
    expect((await fetch(`${spawned.url}/v2/models/simple/infer`, { method: "POST", body: simple })).status).toBe(200);
    expect(await spawned.stop()).toBe(0);
    const written = JSON.parse(readFileSync(file, "utf8"));
    expect(written.traceEvents.filter((e: { cat?: string }) => e.cat === "execution")).toHaveLength(1);
  });

  it("refuses malformed rate-limiter flags and an HTTP server the runtime lacks, naming the flag", () => {
    const cases: [string[], RegExp][] = [
      [["--rate-limit", "on"], /--rate-limit 'on' is not one of off, execution_count/],
      [["--rate-limit", "execution_count", "--rate-limit-resource", "R:many"], /--rate-limit-resource 'R:many' is not <name>:<count>\[:<device>\]/],
      [["--rate-limit-resource", "R:1"], /--rate-limit-resource needs --rate-limit execution_count/],
      // Bun's own server is Bun's to offer (adapters/bun/main.ts); Node has node:http alone.
      [["--http-server", "bun"], /--http-server 'bun' is not one this runtime has \(node\)/],
    ];
    for (const [flags, message] of cases) {
      const run = spawnSync("node", [BIN, "serve", "--repo", "functions", "--port", "0", ...flags], { encoding: "utf8" });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });

  it("refuses --modelmesh-root without what ModelMesh needs: the gRPC port, explicit control, a memory budget, a folder", () => {
    const mm = ["--modelmesh-root", "functions"];
    const cases: [string[], RegExp][] = [
      [[...mm, "--model-control-mode", "explicit", "--host-memory-budget", "1G"], /--modelmesh-root serves ModelMesh's model-runtime API on the gRPC port: give --grpc-port too/],
      [[...mm, "--grpc-port", "0", "--host-memory-budget", "1G"], /--modelmesh-root needs --model-control-mode explicit/],
      [[...mm, "--grpc-port", "0", "--model-control-mode", "explicit"], /--modelmesh-root needs --host-memory-budget/],
      [["--modelmesh-root", "/nonexistent", "--grpc-port", "0", "--model-control-mode", "explicit", "--host-memory-budget", "1G"], /--modelmesh-root '\/nonexistent' is not a directory/],
    ];
    for (const [flags, message] of cases) {
      const run = spawnSync("node", [BIN, "serve", "--repo", "functions", "--port", "0", ...flags], { encoding: "utf8" });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });

  it("answers a flag it does not know or a missing value with one line and where the command's flags are, exit 2, never a stack trace", () => {
    for (const [args, message] of [
      [["serve", "--bogus"], /^tensorfn: Unknown option '--bogus'\nusage: tensorfn serve --repo <dir> \[flags\]   \(tensorfn serve --help for its flags\)\n$/],
      [["serve", "--port"], /^tensorfn: Option '--port <value>' argument missing\nusage: tensorfn serve/],
      [["check", "--nope", "functions"], /^tensorfn: Unknown option '--nope'\nusage: tensorfn check/],
    ] as const) {
      const run = spawnSync("node", [BIN, ...args], { encoding: "utf8" });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/ at /);
    }
  });

  it("names the repository as the user gave it: a --repo flag, a folder, or the default left out", () => {
    const tmp = mkdtempSync(join(tmpdir(), "tensorfn-cwd-"));
    writeFileSync(join(tmp, "file"), "");
    for (const [args, cwd, message] of [
      [["serve", "--repo", "/nonexistent/repo"], undefined, /^tensorfn: --repo '\/nonexistent\/repo' does not exist\n$/],
      [["dev", "/nonexistent/repo"], undefined, /^tensorfn: '\/nonexistent\/repo' does not exist\n$/],
      [["dev", "file"], tmp, /^tensorfn: 'file' is not a directory\n$/],
      [["dev"], tmp, /^tensorfn: 'functions' \(the default; name the repository: tensorfn dev <dir>\) does not exist\n$/],
      [["dev", "a", "b"], tmp, /^tensorfn: dev takes one repository folder, not 'a' 'b'\n$/],
    ] as const) {
      const run = spawnSync("node", [join(process.cwd(), BIN), ...args], { encoding: "utf8", cwd });
      expect(run.status, args.join(" ")).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });
});

describe("tensorfn help and version", () => {
  const cli = (...args: string[]) => spawnSync("node", [BIN, ...args], { encoding: "utf8" });

  it("prints the commands for --help, -h and help on stdout, exit 0; with no command, on stderr, exit 2", () => {
    for (const args of [["--help"], ["-h"], ["help"]]) {
      const run = cli(...args);
      expect(run.status, args[0]).toBe(0);
      expect(run.stderr).toBe("");
      expect(run.stdout).toMatch(/^tensorfn \d+\.\d+\.\d+: /);
      for (const command of ["dev", "serve", "check", "convert", "init", "bench"]) expect(run.stdout).toMatch(new RegExp(`^  ${command} +\\S`, "m"));
    }
    const bare = cli();
    expect(bare.status).toBe(2);
    expect(bare.stdout).toBe("");
    expect(bare.stderr).toMatch(/^tensorfn \d/);
  });

  it("prints each command's own flags for <command> --help, -h and help <command>", () => {
    const serve = cli("serve", "--help");
    expect(serve.status).toBe(0);
    expect(serve.stdout).toMatch(/^usage: tensorfn serve --repo <dir> \[flags\]\n/);
    expect(cli("help", "serve").stdout).toBe(serve.stdout);
    expect(cli("serve", "--port", "1", "-h").stdout).toBe(serve.stdout);
    expect(cli("init", "--help").stdout).toMatch(/^usage: tensorfn init <dir> \[--model <model.onnx> \[--handler\]\]\n[^]*--handler /);
    expect(cli("check", "-h").stdout).toMatch(/^usage: tensorfn check <dir>/);
    expect(cli("convert", "--help").stdout).toMatch(/^usage: tensorfn convert <dir>/);
    expect(cli("dev", "--help").stdout).toMatch(/^usage: tensorfn dev \[dir\]/);
    expect(cli("help", "bench").stdout).toMatch(/^usage: tensorfn bench <url> --model <m>/);
  });

  it("prints the package's version for --version and -v, the one the server reports", () => {
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    for (const flag of ["--version", "-v"]) expect(cli(flag)).toMatchObject({ status: 0, stdout: `${version}\n`, stderr: "" });
    expect(VERSION).toBe(version);
  });

  it("names a command it does not know, suggesting the nearest, exit 2", () => {
    expect(cli("serv")).toMatchObject({ status: 2, stdout: "", stderr: "tensorfn: unknown command 'serv'; did you mean 'serve'?\ntensorfn --help lists the commands\n" });
    expect(cli("--port", "1").stderr).toMatch(/^tensorfn: unknown command '--port'; an option comes after a command/);
    expect(cli("frobnicate").stderr).toMatch(/^tensorfn: unknown command 'frobnicate'\n/);
  });

  it("answers help and version without loading the runtime: within a bare node's start and 150 ms", () => {
    const time = (args: string[]) => {
      const start = performance.now();
      spawnSync("node", args);
      return performance.now() - start;
    };
    const best = (args: string[]) => Math.min(...[0, 1, 2].map(() => time(args)));
    const bare = best(["-e", "0"]);
    expect(best([BIN, "--version"])).toBeLessThan(bare + 150);
    expect(best([BIN, "serve", "--help"])).toBeLessThan(bare + 150);
  });
});

describe("tensorfn dev", () => {
  it("prints the URLs, serves lazily, and reloads a function when its function.yaml changes", async () => {
    const repo = tempRepository("simple");
    const server = await spawnServer("node", [BIN, "dev", repo, "--port", "0"]);
    try {
      await server.waitFor(/v2\/models\/simple /);
      const config = async () => (await (await fetch(`${server.url}/v2/models/simple/config`)).json()).max_batch_size;
      expect(await config()).toBe(8);
      const yaml = join(repo, "simple", "function.yaml");
      writeFileSync(yaml, readFileSync(yaml, "utf8").replace("max_batch_size: 8", "max_batch_size: 4"));
      await server.waitFor(/simple v1: reloaded/);
      expect(server.output()).toMatch(/simple: changed; reloading/);
      expect(await config()).toBe(4);
    } finally {
      await server.stop();
    }
  });
});

describe("tensorfn dev: reloads that fail", () => {
  it("keeps the serving version through a broken config, a broken model file and a broken handler, logging the file (and line) of each", { timeout: 90_000 }, async () => {
    const repo = tempRepository("simple", "word_count");
    const server = await spawnServer("node", [BIN, "dev", repo, "--port", "0"]);
    const simple = () =>
      fetch(`${server.url}/v2/models/simple/infer`, {
        method: "POST",
        body: JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) }),
      }).then(async (r) => [r.status, ((await r.json()) as { outputs?: { data: number[] }[] }).outputs?.[0]?.data[0]]);
    const words = () => fetch(`${server.url}/v1/functions/word_count`, { method: "POST", body: JSON.stringify({ text: "a b" }) }).then(async (r) => [r.status, await r.json()]);
    try {
      await server.waitFor(/v2\/models\/simple /);
      expect(await simple()).toEqual([200, 2]);
      expect(await words()).toEqual([200, { words: 2, longest: "a" }]);

      const yaml = join(repo, "simple", "function.yaml");
      writeFileSync(yaml, readFileSync(yaml, "utf8").replace("max_batch_size: 8", "max_batch_size: 8\nmax_batch_sise: 4"));
      await server.waitFor(/simple\/function\.yaml:\d+: max_batch_sise: /, 20_000);
      expect(await simple()).toEqual([200, 2]);

      writeFileSync(yaml, readFileSync(yaml, "utf8").replace("\nmax_batch_sise: 4", ""));
      writeFileSync(join(repo, "simple", "1", "model.onnx"), "not a model");
      await server.waitFor(/simple v1: reload failed, previous deployment still serving: failed to load model simple\/1\/model\.onnx: /, 20_000);
      expect(await simple()).toEqual([200, 2]);

      writeFileSync(join(repo, "word_count", "handler.ts"), "export function execute(requests) {\n  return requests.map((r) => r.text( + 1);\n}\n");
      await server.waitFor(/handler does not compile: word_count\/handler\.ts:2:\d+: /, 20_000);
      expect(await words()).toEqual([200, { words: 2, longest: "a" }]);
    } finally {
      await server.stop();
    }
  });
});

describe("tensorfn init", () => {
  const init = (...args: string[]) => spawnSync("node", [BIN, "init", ...args], { encoding: "utf8" });

  it("writes, from a model with scalar and variable inputs (Silero VAD), a function.yaml that states what a load completes, and check passes it", () => {
    const repo = tempRepository();
    const run = init(join(repo, "vad"), "--model", "node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx");
    expect(run.status, run.stderr).toBe(0);
    const yaml = readFileSync(join(repo, "vad", "function.yaml"), "utf8");
    expect(yaml).toContain("max_batch_size: 0");
    expect(yaml).toContain(`- { name: "sr", data_type: TYPE_INT64, dims: [1], reshape: { shape: [] } }`);
    expect(yaml).toContain(`- { name: "state", data_type: TYPE_FP32, dims: [2, -1, 128] }`);
    expect(readFileSync(join(repo, "vad", "1", "model.onnx")).length).toBeGreaterThan(100_000);
    const check = spawnSync("node", [BIN, "check", repo], { encoding: "utf8" });
    expect(check.stdout.trim(), check.stdout).toBe(`${repo}: ok`);
  });

  it("writes a handler function whose version folder survives git: a clone passes check", () => {
    const work = mkdtempSync(join(tmpdir(), "tensorfn-git-"));
    const run = init(join(work, "repo", "hello"));
    expect(run.stdout).toMatch(/wrote function\.yaml, handler\.ts, 1\/\.keep/);
    const git = (cwd: string, ...args: string[]) => spawnSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });
    git(join(work, "repo"), "init", "-q");
    git(join(work, "repo"), "add", "-A");
    git(join(work, "repo"), "commit", "-qm", "hello");
    expect(git(work, "clone", "-q", "repo", "clone").status).toBe(0);
    const check = spawnSync("node", [BIN, "check", join(work, "clone")], { encoding: "utf8" });
    expect(check.stdout.trim()).toBe(`${join(work, "clone")}: ok`);
  });

  it("--handler's code answers a client's wrong input with a 400 naming the input, and serves a model with variable and reshaped inputs (Silero VAD) as written", async () => {
    const repo = tempRepository();
    expect(init(join(repo, "mlp"), "--model", "functions/simple/1/model.onnx", "--handler").status).toBe(0);
    expect(init(join(repo, "vad"), "--model", "node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx", "--handler").status).toBe(0);
    const server = await spawnServer("node", [BIN, "serve", "--repo", repo, "--port", "0"]);
    try {
      const call = async (name: string, body: unknown) => {
        const res = await fetch(`${server.url}/v1/functions/${name}`, { method: "POST", body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const sixteen = Array.from({ length: 16 }, (_, i) => i);
      for (const [body, error] of [
        [{ INPUT0: sixteen }, /INPUT1: send an array of values/],
        [{ INPUT0: [1, 2], INPUT1: sixteen }, /INPUT0: 2 values for shape \[1, 16\]: send 16/],
        [{ INPUT0: sixteen, INPUT1: [...sixteen.slice(1), "x"] }, /INPUT1\[15\]: "x" is not an integer/],
        [{ INPUT0: sixteen, INPUT1: [...sixteen.slice(1), 0.5] }, /INPUT1\[15\]: 0.5 is not an integer/],
      ] as const) {
        const answer = await call("mlp", body);
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expect(answer.body.error).toMatch(error);
      }
      expect((await call("mlp", { INPUT0: sixteen, INPUT1: sixteen })).body.OUTPUT0).toEqual(sixteen.map((v) => 2 * v));
      const state = new Array(256).fill(0);
      expect(await call("vad", { input: new Array(512).fill(0.1), state: state.slice(1), sr: [16000] })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/state: 255 values for shape \[2, -1, 128\]: send a multiple of 256/) } });
      const vad = await call("vad", { input: new Array(512).fill(0.1), state, sr: [16000] });
      expect(vad.status, JSON.stringify(vad.body)).toBe(200);
      expect(vad.body.output).toHaveLength(1);
      expect(vad.body.stateN).toHaveLength(256);
    } finally {
      await server.stop();
    }
  });

  it("refuses a folder that is not empty, a name that is not a function's, --handler without a model, and a file that is not a model — writing nothing", () => {
    const repo = tempRepository("simple");
    const fifo = join(mkdtempSync(join(tmpdir(), "tensorfn-fifo-")), "model.onnx");
    spawnSync("mkfifo", [fifo]);
    const huge = join(dirname(fifo), "huge.onnx");
    spawnSync("truncate", ["-s", "3G", huge]); // sparse: 3 GiB that take no room
    for (const [args, message] of [
      [[join(repo, "simple")], /is not empty/],
      [[join(repo, "bad name")], /the folder's name is the function's name: .*not a valid name/],
      [[join(repo, "h"), "--handler"], /--handler writes a handler around a model/],
      [[join(repo, "m"), "--model", "README.md"], /init: failed to load model/],
      // Read as a load reads a model: /dev/zero would be read until memory ran out, a FIFO wait for a writer.
      [[join(repo, "z"), "--model", "/dev/zero"], /init: model file \/dev\/zero is a device, not a regular file/],
      [[join(repo, "f"), "--model", fifo], /init: model file .*\/model\.onnx is a FIFO, not a regular file/],
      [[join(repo, "g"), "--model", huge], /init: model file .*\/huge\.onnx is 3221225472 bytes, over the ceiling of 2147483648/],
    ] as const) {
      const run = init(...args);
      expect(run.status, args.join(" ")).toBe(2);
      expect(run.stderr).toMatch(message);
    }
    expect(readdirSync(repo)).toEqual(["simple"]);
  });

  it("--handler writes a model's tensor names only as string literals: names holding newlines, */, quotes, backticks, ${ and U+2028 stay data, and the handler serves", async () => {
    // Each name, were it pasted into the source as it is, would run a line that prints INJECTED.
    const hostile = [
      "a\nprocess.stdout.write('INJECTED 1\\n'); //",
      "b */ process.stdout.write('INJECTED 2\\n'); /*",
      `c" + process.stdout.write('INJECTED 3\\n') + "`,
      "d` + process.stdout.write('INJECTED 4\\n') + `",
      "${process.stdout.write('INJECTED 5\\n')}",
      "f\u2028process.stdout.write('INJECTED 6\\n'); //",
      "g\\\nprocess.stdout.write('INJECTED 7\\n'); //",
    ];
    const dir = mkdtempSync(join(tmpdir(), "tensorfn-init-"));
    const model = join(dir, "names.onnx");
    writeFileSync(model, encodeModel(graph({
      name: "names",
      nodes: hostile.map((name, i) => node("Identity", [name], [`out${i}`])),
      inputs: hostile.map((name) => valueInfo(name, DataType.FLOAT, ["batch", 2])),
      outputs: hostile.map((_, i) => valueInfo(`out${i}`, DataType.FLOAT, ["batch", 2])),
    })));
    const repo = tempRepository();
    const run = init(join(repo, "names"), "--model", model, "--handler");
    expect(run.status, run.stderr).toBe(0);
    const source = readFileSync(join(repo, "names", "handler.ts"), "utf8");
    expect(source).not.toMatch(/[\u2028\u2029]/); // a line terminator, even inside a // comment

    const server = await spawnServer("node", [BIN, "serve", "--repo", repo, "--port", "0"]);
    try {
      const body = Object.fromEntries(hostile.map((name, i) => [name, [i, i + 0.5]]));
      const res = await fetch(`${server.url}/v1/functions/names`, { method: "POST", body: JSON.stringify(body) });
      expect(res.status, server.output()).toBe(200);
      expect(await res.json()).toEqual(Object.fromEntries(hostile.map((_, i) => [`out${i}`, [i, i + 0.5]])));
      expect(server.output()).not.toContain("INJECTED");
    } finally {
      await server.stop();
    }
  });
});
