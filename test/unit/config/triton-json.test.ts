import { defaultDynamicBatching } from "../../../runtime/config/mod.ts";
import { describe, expect, it } from "vitest";
import { completeConfig, parseTritonJsonConfig, toTritonJson } from "../../../runtime/config/mod.ts";
import { RuntimeError } from "../../../runtime/core/mod.ts";
import { declared, sig, yaml } from "./_helpers.ts";

const full = completeConfig(
  declared(yaml`
    max_batch_size: 8
    input:
      - { name: INPUT0, data_type: TYPE_INT32, dims: [16], optional: true }
      - { name: S, data_type: TYPE_STRING, dims: [1], reshape: { shape: [] } }
    output:
      - { name: OUTPUT0, data_type: TYPE_INT32, dims: [16] }
    instance_group: [{ count: 2, kind: KIND_CPU }, { name: g, kind: KIND_GPU, gpus: [1] }]
    version_policy: { specific: { versions: [1, 3] } }
    dynamic_batching: { preferred_batch_size: [4, 8], max_queue_delay_microseconds: 100, preserve_ordering: true }
    optimization: { graph: { level: 2 } }
    parameters: { intra_op_thread_count: 1 }
    default_model_filename: net.onnx
  `),
  { inputs: [sig("INPUT0:INT32:[-1,16]"), sig("S:BYTES:[-1]")], outputs: [sig("OUTPUT0:INT32:[-1,16]")] },
);

describe("`toTritonJson()`", () => {
  it("prints every field in Triton's JSON form, defaults included", () => {
    expect(toTritonJson(full)).toEqual({
      name: "simple",
      platform: "onnxruntime_onnx",
      backend: "onnxruntime",
      version_policy: { specific: { versions: [1, 3] } },
      max_batch_size: 8,
      input: [
        {
          name: "INPUT0",
          data_type: "TYPE_INT32",
          format: "FORMAT_NONE",
          dims: [16],
          is_shape_tensor: false,
          allow_ragged_batch: false,
          optional: true,
        },
        {
          name: "S",
          data_type: "TYPE_STRING",
          format: "FORMAT_NONE",
          dims: [1],
          reshape: { shape: [] },
          is_shape_tensor: false,
          allow_ragged_batch: false,
          optional: false,
        },
      ],
      output: [{ name: "OUTPUT0", data_type: "TYPE_INT32", dims: [16], label_filename: "", is_shape_tensor: false }],
      optimization: {
        graph: { level: 2 },
        priority: "PRIORITY_DEFAULT",
        input_pinned_memory: { enable: true },
        output_pinned_memory: { enable: true },
      },
      dynamic_batching: {
        preferred_batch_size: [4, 8],
        max_queue_delay_microseconds: 100,
        preserve_ordering: true,
        priority_levels: 0,
        default_priority_level: 0,
        default_queue_policy: {
          timeout_action: "REJECT",
          default_timeout_microseconds: 0,
          allow_timeout_override: false,
          max_queue_size: 0,
        },
        priority_queue_policy: {},
      },
      instance_group: [
        { name: "simple_0", kind: "KIND_CPU", count: 2, gpus: [], secondary_devices: [], profile: [], passive: false, host_policy: "" },
        { name: "g", kind: "KIND_GPU", count: 1, gpus: [1], secondary_devices: [], profile: [], passive: false, host_policy: "" },
      ],
      default_model_filename: "net.onnx",
      parameters: { intra_op_thread_count: { string_value: "1" } },
      model_warmup: [],
      response_cache: { enable: false },
    });
  });

  it("omits dynamic_batching when it is off and never prints accelerator", () => {
    const json = toTritonJson({ ...full, dynamic_batching: undefined, accelerator: "cuda" });
    expect(json).not.toHaveProperty("dynamic_batching");
    expect(json).not.toHaveProperty("accelerator");
  });

  it("survives JSON serialisation unchanged (plain data, numbers not strings)", () => {
    const json = toTritonJson(full);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });
});

describe("`parseTritonJsonConfig()`", () => {
  // Triton's JSON has no accelerator: a parsed config leaves it to the server default.
  it("round-trips what `toTritonJson()` emits", () => {
    expect(parseTritonJsonConfig(toTritonJson(full), "simple")).toEqual({ ...full, accelerator: undefined });
    const minimal = completeConfig(declared(""), { inputs: [sig("x:FP32:[2]")], outputs: [sig("y:FP32:[2]")] });
    expect(parseTritonJsonConfig(JSON.parse(JSON.stringify(toTritonJson(minimal))), "simple")).toEqual({ ...minimal, accelerator: undefined });
  });

  it("round-trips an instance group's rate_limiter (printed only where one is set)", () => {
    const config = completeConfig(
      declared(yaml`
        instance_group:
          - { count: 1, kind: KIND_CPU, rate_limiter: { resources: [{ name: R1, count: 4 }, { name: G, global: true, count: 2 }], priority: 2 } }
          - { count: 1, kind: KIND_CPU }
      `),
      { inputs: [sig("x:FP32:[2]")], outputs: [sig("y:FP32:[2]")] },
    );
    const json = toTritonJson(config) as { instance_group: Record<string, unknown>[] };
    expect(json.instance_group[0]!.rate_limiter).toEqual({ resources: [{ name: "R1", global: false, count: 4 }, { name: "G", global: true, count: 2 }], priority: 2 });
    expect("rate_limiter" in json.instance_group[1]!).toBe(false);
    expect(parseTritonJsonConfig(JSON.parse(JSON.stringify(json)), "simple")).toEqual({ ...config, accelerator: undefined });
  });

  it("round-trips an identity config (platform '')", () => {
    const identity = declared(yaml`
      backend: identity
      input: [{ name: A, data_type: TYPE_FP32, dims: [2] }]
      output: [{ name: B, data_type: TYPE_FP32, dims: [2] }]
    `);
    const config = completeConfig(identity, { inputs: [], outputs: [] });
    expect(parseTritonJsonConfig(toTritonJson(config), "simple")).toEqual({ ...config, accelerator: undefined });
  });

  it("accepts a sparse override with protobuf names and 64-bit integers as strings", () => {
    const config = parseTritonJsonConfig(
      { max_batch_size: 4, input: [{ name: "x", data_type: "TYPE_FP32", dims: ["3", "-1"] }], dynamic_batching: {} },
      "f",
    );
    expect(config.max_batch_size).toBe(4);
    expect(config.input[0]!.dims).toEqual([3, -1]);
    expect(config.dynamic_batching).toEqual(defaultDynamicBatching());
    expect(config.output).toEqual([]);
    // Any integer, as protobuf's JSON mapping allows: Triton's model-control example sends {"max_batch_size":"16"}.
    const strings = parseTritonJsonConfig({ max_batch_size: "16", instance_group: [{ count: "2", gpus: ["0"] }], dynamic_batching: { preferred_batch_size: ["4"] } }, "f");
    expect([strings.max_batch_size, strings.instance_group[0]!.count, strings.instance_group[0]!.gpus, strings.dynamic_batching!.preferred_batch_size]).toEqual([16, 2, [0], [4]]);
    expect(() => parseTritonJsonConfig({ max_batch_size: "sixteen" }, "f")).toThrow(/max_batch_size/);
  });

  it("rejects unknown fields, YAML conveniences, our own keys and unsupported non-defaults", () => {
    const attempt = (json: unknown) => {
      try {
        parseTritonJsonConfig(json, "simple");
      } catch (error) {
        expect((error as RuntimeError).code).toBe("INVALID_ARG");
        return (error as Error).message;
      }
      throw new Error("did not throw");
    };
    expect(attempt({ max_batch_sise: 1 })).toBe(
      "invalid config for function 'simple': max_batch_sise: unknown field; did you mean 'max_batch_size'?",
    );
    expect(attempt({ accelerator: "cuda" })).toMatch(/accelerator: unknown field/);
    expect(attempt({ parameters: { k: "v" } })).toMatch(/parameters\.k: expected a mapping, got 'v'/);
    expect(attempt({ input: [{ name: "x", data_type: "TYPE_FP32", dims: [1], format: "FORMAT_NCHW" }] })).toMatch(
      /input\[0\]\.format: FORMAT_NCHW needs dims of three dimensions \(without the batch\), not \[1\]/,
    );
    expect(attempt({ input: [{ name: "x", data_type: "TYPE_FP32", dims: [1], is_shape_tensor: true }] })).toMatch(/input\[0\]\.is_shape_tensor: only the default false is supported/);
    expect(attempt({ dynamic_batching: { priority_levels: 2, default_priority_level: 3 } })).toMatch(/default_priority_level: 3 is not a level in 1..2/);
    expect(attempt({ dynamic_batching: { target_latency_ms: 5 } })).toMatch(/target_latency_ms: unknown field/);
    expect(attempt({ name: "other" })).toBe("invalid config for function 'simple': name: 'other' does not match the function name 'simple'");
    expect(attempt([])).toBe("invalid config for function 'simple': config: expected a mapping, got a list");
  });
});
