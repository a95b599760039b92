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
