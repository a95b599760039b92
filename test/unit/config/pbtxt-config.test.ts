import { describe, expect, it } from "vitest";
import { convertPbtxt, formatIssue, parseFunctionConfig, parsePbtxtConfig } from "../../../runtime/config/mod.ts";

const read = (text: string, name = "fn") => parsePbtxtConfig(text, { file: `${name}/config.pbtxt`, name });
const problems = (text: string) => read(text).errors.map(formatIssue);

const TUNED = `name: "fn"
platform: "onnxruntime_onnx"
max_batch_size: 8
version_policy: { latest { num_versions: 2 } }
input [
  { name: "IMAGE", data_type: TYPE_FP32, format: FORMAT_NCHW, dims: [ 3, -1, -1 ] },
  { name: "SCALE" data_type: TYPE_FP32 dims: [ 1 ] reshape: { shape: [ ] } optional: true }
]
output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 1000 ] label_filename: "labels.txt" } ]
instance_group [ { name: "cpus" count: 2 kind: KIND_CPU }, { count: 1 kind: KIND_GPU gpus: [ 0 ] } ]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
  priority_levels: 2
  default_priority_level: 1
  default_queue_policy { timeout_action: REJECT default_timeout_microseconds: 1000000 max_queue_size: 64 }
  priority_queue_policy { key: 2 value: { max_queue_size: 8 } }
}
optimization { graph { level: 1 } cuda { graphs: true } }
parameters { key: "execution_thread" value: { string_value: "worker" } }
parameters: { key: "intra_op_thread_count", value: { string_value: "2" } }
model_warmup [ { name: "w" batch_size: 2 count: 3 inputs { key: "IMAGE" value: { data_type: TYPE_FP32 dims: [ 3, 8, 8 ] random_data: true } } } ]
response_cache { enable: true }
metric_tags { key: "team" value: "vision" }
`;

describe("config.pbtxt", () => {
  it("reads Triton's text format into the config function.yaml would give, naming the fields it ignores", () => {
    const { config, errors, ignored } = read(TUNED);
    expect(errors).toEqual([]);
    expect(ignored).toEqual(["metric_tags", "optimization.cuda"]);
    expect(config).toMatchObject({
      max_batch_size: 8,
      version_policy: { latest: { num_versions: 2 } },
      input: [
        { name: "IMAGE", data_type: "TYPE_FP32", dims: [3, -1, -1], format: "FORMAT_NCHW" },
        { name: "SCALE", dims: [1], reshape: { shape: [] }, optional: true },
      ],
      output: [{ name: "LOGITS", label_filename: "labels.txt" }],
      instance_group: [{ name: "cpus", count: 2, kind: "KIND_CPU" }, { count: 1, kind: "KIND_GPU", gpus: [0] }],
      dynamic_batching: { preferred_batch_size: [4, 8], max_queue_delay_microseconds: 100, priority_levels: 2, default_priority_level: 1 },
      optimization: { graph: { level: 1 } },
      parameters: { execution_thread: { string_value: "worker" }, intra_op_thread_count: { string_value: "2" } },
      model_warmup: [{ name: "w", batch_size: 2, count: 3 }],
      response_cache: { enable: true },
    });
  });

  it("converts to a function.yaml that reads the same (tensorfn convert), ignored fields left out and named", () => {
    const { yaml, ignored } = convertPbtxt(TUNED, { file: "fn/config.pbtxt", name: "fn" });
    expect(ignored.length).toBe(2);
    expect(yaml).toContain("# Left out (no effect in tensorfn): metric_tags, optimization.cuda.");
    expect(yaml!.split("\n").filter((l) => !l.startsWith("#")).join("\n")).not.toMatch(/cuda|metric_tags/);
    expect(yaml).toContain("format: FORMAT_NCHW");
    expect(yaml).toContain("label_filename: labels.txt");
    const back = parseFunctionConfig(yaml!, { file: "fn/function.yaml", name: "fn" });
    expect(back.errors).toEqual([]);
    expect(back.config).toEqual(read(TUNED).config);
  });

  it("puts each problem on its line, with the nearest valid name", () => {
    expect(problems(`name: "fn"\n\nmax_batch_sise: 4\n`)).toEqual(["fn/config.pbtxt:3: max_batch_sise: unknown field; did you mean 'max_batch_size'?"]);
    expect(problems(`input [\n  { name: "x" data_type: TYPE_FLOAT dims: [ 4 ] }\n]`)).toEqual(["fn/config.pbtxt:2: 'TYPE_FLOAT' is not a DataType; did you mean 'TYPE_FP32'?"]);
    expect(problems(`input [\n  { name: "x"\n    nmae: "y" } ]`)).toEqual(["fn/config.pbtxt:3: nmae: unknown field; did you mean 'name'?"]);
    expect(problems(`max_batch_size: 8\ninput [\n  { name: "a" data_type: TYPE_FP32 dims: [ 4 ] },\n  { name: "b" data_type: TYPE_FP32 dims: [ 0 ] }\n]`)).toEqual([
      "fn/config.pbtxt:4: input[1].dims[0]: 0 is not a dimension; use a size ≥ 1, or -1 for a variable one",
    ]);
    expect(problems(`max_batch_size: 8\nparameters {\n  key: "execution_thread"\n  value: { string_value: "sideways" }\n}`)).toEqual([
      'fn/config.pbtxt:3: parameters.execution_thread: "sideways" is not one of auto, main, worker',
    ]);
    expect(problems(`dynamic_batching {}\n\nensemble_scheduling {}`)).toEqual([
      "fn/config.pbtxt:3: ensemble_scheduling: only one of dynamic_batching, sequence_batching, ensemble_scheduling may be set (Triton's oneof scheduling_choice)",
    ]);
    expect(problems(`name: "other"`)).toEqual(["fn/config.pbtxt:1: name: 'other' does not match the folder name 'fn'; rename one or remove name"]);
    expect(problems(`max_batch_size: 8\nmodel_transaction_policy { decoupled: true }`)).toEqual([
      "fn/config.pbtxt:2: model_transaction_policy.decoupled: decoupled models (several responses per request) are not supported yet",
    ]);
    expect(problems(`platform: "tensorrt_plan"`)[0]).toMatch(/^fn\/config\.pbtxt:1: platform: /);
    expect(problems(`max_batch_size: 8\ninput { name: "a"`)[0]).toMatch(/^fn\/config\.pbtxt:\d+: invalid text format: /);
  });

  it("places a syntax error at the line the parser stopped on, for each kind of token, and an input that ends too soon at the bracket left open", () => {
    // TUNED is 24 lines long and valid; each case puts its fault at a known line after it, or replaces one of its lines.
    const lines = TUNED.trimEnd().split("\n");
    const at = (line: number, replacement: string) => lines.map((l, i) => (i === line - 1 ? replacement : l)).join("\n");
    const after = (extra: string) => `${lines.join("\n")}\n${extra}`;
    const first = (text: string) => problems(text)[0];
    expect(first(at(13, "  max_queue_delay_microseconds: 100x"))).toBe("fn/config.pbtxt:13: invalid text format: invalid number in 'max_queue_delay_microseconds: 100x'");
    expect(first(at(20, `parameters { key: "execution_thread" value: { string_value: "worker } }`))).toBe("fn/config.pbtxt:20: invalid text format: a string is not closed on its line");
    expect(first(at(9, `output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 1000 } ]`))).toBe(`fn/config.pbtxt:9: invalid text format: expected "," or "]" in list, got "}"`);
    expect(first(at(10, `instance_group [ { name: "cpus" count: 2 kind: KIND_CPU }`))).toBe(`fn/config.pbtxt:11: invalid text format: expected "," or "]" in list, got "dynamic_batching"`);
    expect(first(at(14, "  priority_levels: two"))).toBe(`fn/config.pbtxt:14: invalid text format: expected an integer, got "two"`);
    expect(first(at(23, "response_cache { enable: maybe }"))).toBe(`fn/config.pbtxt:23: invalid text format: expected a bool, got "maybe"`);
    expect(first(at(2, "platform: 12"))).toBe(`fn/config.pbtxt:2: invalid text format: expected a string, got "12"`);
    expect(first(at(15, "  default_priority_level 1"))).toBe(`fn/config.pbtxt:15: invalid text format: expected ":" before value of field "default_priority_level"`);
    expect(first(at(15, "  default_priority_level: 1 @"))).toBe(`fn/config.pbtxt:15: invalid text format: unexpected "@"`);
    expect(first(after("}"))).toBe(`fn/config.pbtxt:25: invalid text format: expected a field name, got "}"`);
    expect(first(at(10, `instance_group [ { name: "cpus" count: 2 kind: KIND_CPUX }, { count: 1 kind: KIND_GPU gpus: [ 0 ] } ]`))).toBe("fn/config.pbtxt:10: 'KIND_CPUX' is not a Kind; did you mean 'KIND_CPU'?");
    expect(first(at(22, "model_warmup [ { nme: \"w\" } ]"))).toBe("fn/config.pbtxt:22: nme: unknown field; did you mean 'name'?");
    expect(first(after("max_batch_size: 4"))).toBe(`fn/config.pbtxt:25: invalid text format: non-repeated field "max_batch_size" is repeated`);
    // The text ends inside a bracket: the one left open is named.
    expect(first(at(24, `metric_tags { key: "team" value: "vision"`))).toBe(`fn/config.pbtxt:24: invalid text format: the '{' here is never closed (unexpected end of input, expected "}")`);
    expect(first(`max_batch_size: 8\ninput [\n  { name: "a" dims: [ 4 ] }\n`)).toBe(`fn/config.pbtxt:2: invalid text format: the '[' here is never closed (expected "," or "]" in list, got end of input)`);
  });

  it("bounds what it reads: a file too large; nesting only as deep as Triton's schema goes", () => {
    expect(problems("#".repeat(2_000_000))[0]).toMatch(/the file has 2000000 characters; a config\.pbtxt may have at most/);
    const started = performance.now();
    expect(problems(`input [ { name: "x" data_type: TYPE_FP32 dims: [ ${"1,".repeat(120_000)}1 ] } ]`)).toEqual(["fn/config.pbtxt:1: holds more than 100000 values"]);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(problems(`optimization ${"{ graph ".repeat(3000)}${"}".repeat(3000)}`)[0]).toMatch(/^fn\/config\.pbtxt:1: graph: unknown field/);
  });
});

describe("the generated schemas", () => {
  it("are what `npm run proto` makes of the .proto files (regenerate after editing one)", async () => {
    const { spawnSync } = await import("node:child_process");
    const { mkdtempSync, readFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const runtime = new URL("../../../runtime/", import.meta.url).pathname;
    const bin = new URL("../../../node_modules/.bin", import.meta.url).pathname;
    for (const [module, files] of [
      ["config/proto", ["model_config_pb.ts"]],
      ["grpc/proto", ["grpc_service_pb.ts", "health_pb.ts", "infer_request_wire_pb.ts", "model_runtime_pb.ts"]],
    ] as const) {
      const out = mkdtempSync(join(tmpdir(), "tensorfn-proto-"));
      const run = spawnSync(join(bin, "buf"), ["generate", module, "--template", `${module}/buf.gen.yaml`, "-o", out], { cwd: runtime, encoding: "utf8", env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
      expect(run.status, run.stderr).toBe(0);
      for (const file of files) expect(readFileSync(join(out, file), "utf8"), file).toBe(readFileSync(join(runtime, module, file), "utf8"));
    }
  });
});
