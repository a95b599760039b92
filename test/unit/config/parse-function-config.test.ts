import { defaultDynamicBatching } from "../../../runtime/config/mod.ts";
import { describe, expect, it } from "vitest";
import { parseFunctionConfig } from "../../../runtime/config/mod.ts";
import { declared, FILE, issuesOf, yaml } from "./_helpers.ts";

describe("parseFunctionConfig() accepts", () => {
  it("an empty file as a config with every default", () => {
    for (const text of ["", "# nothing here\n", "\n\n"]) {
      expect(declared(text)).toEqual({
        name: "simple",
        platform: "onnxruntime_onnx",
        backend: "onnxruntime",
        input: [],
        output: [],
        version_policy: { latest: { num_versions: 1 } },
        instance_group: [{ name: "simple_0", count: 1, kind: "KIND_AUTO", gpus: [] }],
        optimization: { graph: { level: 0 } },
        parameters: {},
        default_model_filename: "model.onnx",
        accelerator: undefined,
        model_warmup: [],
        scale: { park: "host" },
      });
    }
  });

  it("leaves max_batch_size undefined when omitted and keeps an explicit 0", () => {
    expect(declared("").max_batch_size).toBeUndefined();
    expect(declared("max_batch_size: 0").max_batch_size).toBe(0);
  });

  it("a full Triton-style config, field by field", () => {
    const config = declared(yaml`
      name: simple
      platform: onnxruntime
      backend: onnxruntime
      max_batch_size: 8
      input:
        - { name: INPUT0, data_type: TYPE_INT32, dims: [16] }
        - name: IMAGE
          data_type: TYPE_FP32
          dims: [3, -1, -1]
          optional: true
        - { name: S, data_type: TYPE_STRING, dims: [1], reshape: { shape: [] } }
      output:
        - { name: OUTPUT0, data_type: TYPE_INT32, dims: [16] }
        - { name: P, data_type: TYPE_FP32, dims: [1000], reshape: { shape: [1000, 1, 1] } }
      instance_group:
        - { count: 2, kind: KIND_CPU }
        - { name: gpu, kind: KIND_GPU, gpus: [0, 1] }
      version_policy: { specific: { versions: [1, 3] } }
      dynamic_batching:
        preferred_batch_size: [4, 8]
        max_queue_delay_microseconds: 100
        preserve_ordering: true
        priority_levels: 2
        default_priority_level: 2
        default_queue_policy: { max_queue_size: 16 }
        priority_queue_policy: { "1": { timeout_action: DELAY, default_timeout_microseconds: 5000, allow_timeout_override: true } }
        target_latency_ms: 20
      optimization: { graph: { level: -1 } }
      parameters: { intra_op_thread_count: { string_value: "1" } }
      default_model_filename: net.onnx
      accelerator: cuda
      model_warmup:
        - { name: zeros, batch_size: 2, inputs: { INPUT0: { data_type: TYPE_INT32, dims: [16], zero_data: true } } }
      scale: { min_instances: 0, max_instances: 4, target_concurrency: 8, idle_timeout_ms: 60000, park: none }
    `);
    expect(config).toEqual({
      name: "simple",
      platform: "onnxruntime_onnx",
      backend: "onnxruntime",
      max_batch_size: 8,
      input: [
        { name: "INPUT0", data_type: "TYPE_INT32", dims: [16], optional: false },
        { name: "IMAGE", data_type: "TYPE_FP32", dims: [3, -1, -1], optional: true },
        { name: "S", data_type: "TYPE_STRING", dims: [1], reshape: { shape: [] }, optional: false },
      ],
      output: [
        { name: "OUTPUT0", data_type: "TYPE_INT32", dims: [16], optional: false },
        { name: "P", data_type: "TYPE_FP32", dims: [1000], reshape: { shape: [1000, 1, 1] }, optional: false },
      ],
      instance_group: [
        { name: "simple_0", count: 2, kind: "KIND_CPU", gpus: [] },
        { name: "gpu", count: 1, kind: "KIND_GPU", gpus: [0, 1] },
      ],
      version_policy: { specific: { versions: [1, 3] } },
      dynamic_batching: {
        preferred_batch_size: [4, 8],
        max_queue_delay_microseconds: 100,
        preserve_ordering: true,
        priority_levels: 2,
        default_priority_level: 2,
        default_queue_policy: { timeout_action: "REJECT", default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: 16 },
        priority_queue_policy: {
          "1": { timeout_action: "DELAY", default_timeout_microseconds: 5000, allow_timeout_override: true, max_queue_size: 0 },
        },
        target_latency_ms: 20,
      },
      optimization: { graph: { level: -1 } },
      parameters: { intra_op_thread_count: { string_value: "1" } },
      default_model_filename: "net.onnx",
      accelerator: "cuda",
      model_warmup: [{ name: "zeros", batch_size: 2, count: 1, inputs: { INPUT0: { data_type: "TYPE_INT32", dims: [16], zero_data: true } } }],
      scale: { min_instances: 0, max_instances: 4, target_concurrency: 8, idle_timeout_ms: 60000, park: "none" },
    });
  });

  it("the brief's example verbatim", () => {
    const config = declared(yaml`
      max_batch_size: 8
      input:
        - { name: INPUT0, data_type: TYPE_INT32, dims: [16] }
      output:
        - { name: OUTPUT0, data_type: TYPE_INT32, dims: [16] }
      instance_group: [{ count: 1, kind: KIND_CPU }]
      version_policy: { latest: { num_versions: 1 } }
      parameters: { intra_op_thread_count: { string_value: "1" } }
      optimization: { graph: { level: 1 } }
      accelerator: auto
    `);
    expect(config.max_batch_size).toBe(8);
    expect(config.dynamic_batching).toBeUndefined();
    expect(config.optimization.graph.level).toBe(1);
  });

  it("shorthand parameters (string, number, boolean) as { string_value }", () => {
    const config = declared(yaml`
      parameters:
        intra_op_thread_count: 2
        execution_mode: "1"
        enable_mem_arena: false
        inter_op_thread_count: { string_value: "3" }
    `);
    expect(config.parameters).toEqual({
      intra_op_thread_count: { string_value: "2" },
      execution_mode: { string_value: "1" },
      enable_mem_arena: { string_value: "false" },
      inter_op_thread_count: { string_value: "3" },
    });
  });

  it("`dynamic_batching: {}` and an empty `dynamic_batching:` as enabled with defaults", () => {
    const defaults = defaultDynamicBatching();
    expect(declared("max_batch_size: 4\ndynamic_batching: {}\n").dynamic_batching).toEqual(defaults);
    expect(declared("max_batch_size: 4\ndynamic_batching:\n").dynamic_batching).toEqual(defaults);
    expect(declared("dynamic_batching: {}\n").dynamic_batching).toEqual(defaults);
  });

  it("version policies: latest (num_versions defaults to 1), all, specific", () => {
    expect(declared("version_policy: { latest: {} }").version_policy).toEqual({ latest: { num_versions: 1 } });
    expect(declared("version_policy: { latest: { num_versions: 2 } }").version_policy).toEqual({ latest: { num_versions: 2 } });
    expect(declared("version_policy: { all: {} }").version_policy).toEqual({ all: {} });
    expect(declared("version_policy:\n  all:\n").version_policy).toEqual({ all: {} });
    expect(declared("version_policy: { specific: { versions: [2] } }").version_policy).toEqual({ specific: { versions: [2] } });
  });

  it("backend identity with no platform", () => {
    const config = declared(yaml`
      backend: identity
      input: [{ name: INPUT0, data_type: TYPE_FP32, dims: [-1] }]
      output: [{ name: OUTPUT0, data_type: TYPE_FP32, dims: [-1] }]
    `);
    expect(config.backend).toBe("identity");
    expect(config.platform).toBe("");
  });

  it("rate_limit, with the burst defaulting to one second's worth and the key header in lower case", () => {
    expect(declared("rate_limit: { requests_per_second: 2.5 }").rate_limit).toEqual({ requests_per_second: 2.5, burst: 3 });
    expect(declared("rate_limit: { requests_per_second: 0.1 }").rate_limit).toEqual({ requests_per_second: 0.1, burst: 1 });
    expect(declared("rate_limit: { requests_per_second: 50, burst: 5, key_header: X-Api-Key }").rate_limit).toEqual({
      requests_per_second: 50,
      burst: 5,
      key_header: "x-api-key",
      // With key_header, a total over every key: 10 × the per-key rate unless set.
      total_requests_per_second: 500,
      total_burst: 50,
    });
    expect(declared("rate_limit: { requests_per_second: 1, key_header: k, total_requests_per_second: 3 }").rate_limit).toMatchObject({ total_requests_per_second: 3, total_burst: 3 });
    expect(declared("").rate_limit).toBeUndefined();
  });

  it("a name equal to the folder name", () => {
    expect(declared("name: simple").name).toBe("simple");
  });
});

describe("parseFunctionConfig() reports", () => {
  it("an unknown key with the nearest valid key and the key's line", () => {
    expect(issuesOf("input: []\nmax_batch: 8\n")).toEqual([
      `${FILE}:2: max_batch: unknown field; did you mean 'max_batch_size'?`,
    ]);
    expect(issuesOf("dynamic_batching:\n  max_queue_delay_microsecond: 5\n")).toEqual([
      `${FILE}:2: dynamic_batching.max_queue_delay_microsecond: unknown field; did you mean 'max_queue_delay_microseconds'?`,
    ]);
    expect(issuesOf("input:\n  - name: a\n    data_type: TYPE_FP32\n    dims: [1]\n    dtype: x\n")).toEqual([
      `${FILE}:5: input[0].dtype: unknown field (valid: 'name', 'data_type', 'dims', 'reshape', 'optional', 'format')`,
    ]);
  });

  it("a rate_limit that admits nothing or names no header", () => {
    expect(issuesOf("rate_limit: { requests_per_second: 0 }")).toEqual([`${FILE}:1: rate_limit.requests_per_second: must be > 0, got 0`]);
    expect(issuesOf("rate_limit: { requests_per_second: 5, burst: 0 }")).toEqual([`${FILE}:1: rate_limit.burst: must be ≥ 1, got 0`]);
    expect(issuesOf("rate_limit: { requests_per_second: 5, key_header: 'x api' }")).toEqual([
      `${FILE}:1: rate_limit.key_header: must be an HTTP header name, such as x-api-key`,
    ]);
    expect(issuesOf("rate_limit: { burst: 5 }")).toEqual([`${FILE}:1: rate_limit.requests_per_second: missing required field`]);
  });

  it("sequence_batching: Triton's fields with their defaults, ours (batch_axis, shared_input, max_sequences), and each rule at its line", () => {
    const config = declared(yaml`
      max_batch_size: 8
      sequence_batching:
        max_sequence_idle_microseconds: 5000000
        oldest: { max_candidate_sequences: 16 }
        control_input:
          - { name: START, control: [{ kind: CONTROL_SEQUENCE_START, int32_false_true: [0, 1] }] }
          - { name: ID, control: [{ kind: CONTROL_SEQUENCE_CORRID, data_type: TYPE_UINT64 }] }
        state: [{ input_name: state, output_name: stateN, data_type: TYPE_FP32, dims: [2, 128], batch_axis: 1 }]
        shared_input: [{ name: sr, data_type: TYPE_INT64, data: [16000] }]
    `);
    expect(config.sequence_batching).toEqual({
      max_sequence_idle_microseconds: 5000000,
      oldest: { max_candidate_sequences: 16, preferred_batch_size: [], max_queue_delay_microseconds: 0, preserve_ordering: false },
      control_input: [
        { name: "START", control: [{ kind: "CONTROL_SEQUENCE_START", int32_false_true: [0, 1] }] },
        { name: "ID", control: [{ kind: "CONTROL_SEQUENCE_CORRID", data_type: "TYPE_UINT64" }] },
      ],
      state: [{ input_name: "state", output_name: "stateN", data_type: "TYPE_FP32", dims: [2, 128], batch_axis: 1, initial_state: [] }],
      shared_input: [{ name: "sr", data_type: "TYPE_INT64", dims: [], data: [16000] }],
      max_sequences: 4096,
    });
    expect(declared("max_batch_size: 1\nsequence_batching: {}\n").sequence_batching).toMatchObject({ max_sequence_idle_microseconds: 1000000, control_input: [], state: [] });
    expect(issuesOf(yaml`
      max_batch_size: 1
      input: [{ name: x, data_type: TYPE_FP32, dims: [1] }]
      dynamic_batching: {}
      sequence_batching:
        direct: {}
        oldest: {}
        control_input:
          - { name: x, control: [{ kind: CONTROL_SEQUENCE_READY }] }
          - { name: C, control: [{ kind: CONTROL_SEQUENCE_CORRID, data_type: TYPE_FP32 }] }
        state: [{ input_name: s, output_name: t, data_type: TYPE_FP32, dims: [-1], batch_axis: 3 }]
    `)).toEqual([
      `${FILE}:3: dynamic_batching: a function has one batcher: remove dynamic_batching or sequence_batching`,
      `${FILE}:4: sequence_batching: set one strategy, direct or oldest, not both`,
      `${FILE}:8: sequence_batching.control_input[0].name: 'x' is already an input of the request`,
      `${FILE}:8: sequence_batching.control_input[0].control[0]: CONTROL_SEQUENCE_READY needs exactly one of int32_false_true, fp32_false_true, bool_false_true`,
      `${FILE}:9: sequence_batching.control_input[1].control[0].data_type: TYPE_FP32 cannot hold a sequence id`,
      `${FILE}:10: sequence_batching.state[0].dims: a state's dims must be fixed (no -1)`,
      `${FILE}:10: sequence_batching.state[0].batch_axis: 3 is beyond the state's 2 dimensions`,
    ]);
  });

  it("backend handler: needs a handler inside the folder, lists tensors both ways or neither; a model function may have one too", () => {
    expect(declared("backend: handler\nhandler: handler.ts\n")).toMatchObject({ backend: "handler", platform: "", handler: "handler.ts", handler_timeout_ms: 30000 });
    expect(declared("backend: handler\nhandler: src/h.ts\nhandler_timeout_ms: 500\n").handler_timeout_ms).toBe(500);
    expect(issuesOf("backend: handler\n")).toEqual([`${FILE}:1: backend: backend 'handler' computes with the function's handler; name it with \`handler: handler.ts\``]);
    expect(issuesOf("backend: handler\nhandler: ../../etc/passwd.ts\n")[0]).toMatch(/^functions\/simple\/function.yaml:2: handler: /);
    expect(issuesOf("backend: handler\nhandler: /abs/h.ts\n")[0]).toMatch(/:2: handler: /);
    expect(issuesOf("backend: handler\nhandler: h.ts\ninput: [{ name: a, data_type: TYPE_FP32, dims: [1] }]\n")[0]).toMatch(/: output: backend 'handler' with tensors lists both input and output .*Add output or remove input$/);
    const tensors = "backend: handler\nhandler: h.ts\ninput: [{ name: a, data_type: TYPE_FP32, dims: [1] }]\noutput: [{ name: b, data_type: TYPE_FP32, dims: [1] }]\n";
    expect(declared(tensors)).toMatchObject({ backend: "handler", input: [{ name: "a" }], output: [{ name: "b" }] }); // compute(inputs)
    const carriers = "backend: handler\nhandler: h.ts\ninput: [{ name: body, data_type: TYPE_STRING, dims: [1] }, { name: content_type, data_type: TYPE_STRING, dims: [1] }]\noutput: [{ name: b, data_type: TYPE_FP32, dims: [1] }]\n";
    expect(issuesOf(carriers)[0]).toMatch(/:3: input: inputs named body and content_type \(TYPE_STRING\) are what a body handler's execute\(\) receives/);
    expect(declared("handler: h.ts\n")).toMatchObject({ backend: "onnxruntime", handler: "h.ts" }); // preprocess / postprocess around the model
    expect(issuesOf("handler_timeout_ms: 5\n")[0]).toMatch(/:1: handler_timeout_ms: applies to a function with a handler/);
  });

  it("max_input_elements (ours): a whole number of elements per request, kept as given", () => {
    expect(declared("max_input_elements: 3145728\n").max_input_elements).toBe(3145728);
    expect(declared("max_batch_size: 8\n").max_input_elements).toBeUndefined();
    expect(issuesOf("max_batch_size: 8\nmax_input_elements: 0\n")[0]).toMatch(/:2: max_input_elements: /);
  });

  it("an ensemble: declared tensors, steps wired by tensor names; what no ensemble may have, with file:line", () => {
    const ok = yaml`
      platform: ensemble
      max_batch_size: 8
      input: [{ name: A, data_type: TYPE_INT32, dims: [16] }, { name: B, data_type: TYPE_INT32, dims: [16] }]
      output: [{ name: TWICE_A, data_type: TYPE_INT32, dims: [16] }]
      ensemble_scheduling:
        step:
          - { model_name: simple, input_map: { INPUT0: A, INPUT1: B }, output_map: { OUTPUT0: sum, OUTPUT1: diff } }
          - { model_name: simple, model_version: 1, input_map: { INPUT0: sum, INPUT1: diff }, output_map: { OUTPUT0: TWICE_A } }
    `;
    expect(declared(ok)).toMatchObject({ platform: "ensemble", backend: "ensemble", instance_group: [], ensemble_scheduling: { step: [{ model_name: "simple", model_version: -1 }, { model_version: 1 }] } });
    expect(issuesOf(ok.replace("INPUT1: diff", "INPUT1: nowhere"))).toEqual([`${FILE}:8: ensemble_scheduling.step[1].input_map.INPUT1: tensor 'nowhere' is neither an ensemble input nor any step's output`]);
    expect(issuesOf(ok.replace("OUTPUT1: diff", "OUTPUT1: sum"))[0]).toBe(`${FILE}:7: ensemble_scheduling.step[0].output_map.OUTPUT1: tensor 'sum' is produced twice: step 0 produces it already`);
    expect(issuesOf(ok.replace("{ OUTPUT0: TWICE_A }", "{ OUTPUT0: other }"))).toEqual([`${FILE}:4: output[0].name: no step produces ensemble output 'TWICE_A' (map it in a step's output_map)`]);
    const cycle = ok.replace("{ INPUT0: A, INPUT1: B }", "{ INPUT0: A, INPUT1: back }").replace("{ OUTPUT0: TWICE_A }", "{ OUTPUT0: TWICE_A, OUTPUT1: back }");
    expect(issuesOf(cycle)).toEqual([`${FILE}:7: ensemble_scheduling.step[0]: steps 0 → 1 → 0 form a cycle: each waits for the next one's output`]);
    expect(issuesOf(`${ok}instance_group: [{ count: 2 }]\ndynamic_batching: {}\n`).map((i) => i.replace(/^[^:]+:\d+: /, ""))).toEqual([
      "instance_group: an ensemble has no instances of its own; its steps' functions have theirs",
      "dynamic_batching: an ensemble has no batcher of its own; each step is batched by its function's",
    ]);
    // Ours: a step's condition is read when the config is, and what it reads counts as the step's inputs.
    expect(declared(ok.replace("model_version: 1,", "model_version: 1, condition: \"max(sum) > 3 && param('again')\",")).ensemble_scheduling!.step[1]!.condition).toBe("max(sum) > 3 && param('again')");
    expect(issuesOf(ok.replace("model_version: 1,", "model_version: 1, condition: \"max(sum) >\",")))
      .toEqual([`${FILE}:8: ensemble_scheduling.step[1].condition: ends too early: expected a value`]);
    expect(issuesOf(ok.replace("model_version: 1,", "model_version: 1, condition: \"any(ghost)\",")))
      .toEqual([`${FILE}:8: ensemble_scheduling.step[1].condition: reads tensor 'ghost', which is neither an ensemble input nor any step's output`]);
    expect(issuesOf(ok.replace("{ model_name: simple, input_map: { INPUT0: A, INPUT1: B }", "{ model_name: simple, condition: \"any(TWICE_A)\", input_map: { INPUT0: A, INPUT1: B }"))[0])
      .toMatch(/step\[0\]: steps 0 → 1 → 0 form a cycle/);
    expect(issuesOf("platform: ensemble\n")).toEqual([`${FILE}:1: platform: an ensemble needs ensemble_scheduling with its steps`]);
    expect(issuesOf("ensemble_scheduling: { step: [{ model_name: a, input_map: { x: y } }] }\n")).toEqual([`${FILE}:1: ensemble_scheduling: applies to \`platform: ensemble\` only`]);
  });

  it("response_cache: enable must be a boolean; `response_cache: {}` leaves it off, as in Triton", () => {
    expect(issuesOf(`response_cache: { enable: "yes" }\n`)[0]).toMatch(/^functions\/simple\/function.yaml:1: response_cache.enable: /);
    expect(declared("response_cache: {}\n").response_cache).toBeUndefined();
    expect(declared("response_cache: { enable: true }\n").response_cache).toEqual({ enable: true });
  });

  it("Triton's input format needs three dimensions; an output's label_filename must stay inside the function's folder", () => {
    expect(issuesOf(yaml`
      input: [{ name: a, data_type: TYPE_FP32, dims: [3], format: FORMAT_NCHW }]
      output: [{ name: b, data_type: TYPE_FP32, dims: [3], label_filename: ../labels.txt, optional: true }]
    `)).toEqual([
      `${FILE}:1: input[0].format: FORMAT_NCHW needs dims of three dimensions (without the batch), not [3]`,
      `${FILE}:2: output[0].label_filename: must name a file inside the function's folder (a relative path without '..')`,
      `${FILE}:2: output[0].optional: unknown field; 'optional' applies to inputs only`,
    ]);
    for (const bad of ["/etc/passwd", "a/../../b", "C:/x.txt", "\\\\host\\x"]) {
      expect(issuesOf(`output: [{ name: b, data_type: TYPE_FP32, dims: [3], label_filename: ${JSON.stringify(bad)} }]\n`)[0]).toMatch(/label_filename: must name a file inside/);
    }
    expect(declared("output: [{ name: b, data_type: TYPE_FP32, dims: [3], label_filename: labels/imagenet.txt }]\n").output[0]!.label_filename).toBe("labels/imagenet.txt");
    expect(declared("input: [{ name: a, data_type: TYPE_FP32, dims: [3, 224, 224], format: FORMAT_NCHW }]\n").input[0]!.format).toBe("FORMAT_NCHW");
    expect(declared("input: [{ name: a, data_type: TYPE_FP32, dims: [3], format: FORMAT_NONE }]\n").input[0]!.format).toBeUndefined();
  });

  it("wrong types, saying what was expected and what came", () => {
    expect(issuesOf(yaml`
      max_batch_size: eight
      input: { name: a }
      dynamic_batching:
        preserve_ordering: "yes"
        max_queue_delay_microseconds: 1.5
      default_model_filename: 3
    `)).toEqual([
      `${FILE}:1: max_batch_size: expected an integer, got 'eight'`,
      `${FILE}:2: input: expected a list, got a mapping`,
      `${FILE}:4: dynamic_batching.preserve_ordering: expected true or false, got 'yes'`,
      `${FILE}:5: dynamic_batching.max_queue_delay_microseconds: expected an integer, got 1.5`,
      `${FILE}:6: default_model_filename: expected a string, got 3`,
    ]);
  });

  it("a top level that is not a mapping", () => {
    expect(issuesOf("- a\n- b\n")).toEqual([`${FILE}:1: expected a mapping, got a list`]);
  });

  it("bad enums, quoting the value, with alias suggestions", () => {
    expect(issuesOf(yaml`
      input:
        - { name: a, data_type: TYPE_FLOAT, dims: [1] }
        - { name: b, data_type: TYPE_INT, dims: [1] }
        - { name: c, data_type: TYPE_BYTES, dims: [1] }
        - { name: d, data_type: FP32, dims: [1] }
        - { name: e, data_type: type_fp16, dims: [1] }
        - { name: f, data_type: TYPE_INT23, dims: [1] }
        - { name: g, data_type: COMPLEX, dims: [1] }
      instance_group: [{ kind: CPU }, { kind: KIND_TPU }]
      accelerator: gpu
      optimization: { graph: { level: 3 } }
      platform: tensorrt_plan
    `)).toEqual([
      `${FILE}:2: input[0].data_type: 'TYPE_FLOAT' is not a data_type; did you mean 'TYPE_FP32'?`,
      `${FILE}:3: input[1].data_type: 'TYPE_INT' is not a data_type; did you mean 'TYPE_INT32'?`,
      `${FILE}:4: input[2].data_type: 'TYPE_BYTES' is not a data_type; did you mean 'TYPE_STRING'?`,
      `${FILE}:5: input[3].data_type: 'FP32' is not a data_type; did you mean 'TYPE_FP32'?`,
      `${FILE}:6: input[4].data_type: 'type_fp16' is not a data_type; did you mean 'TYPE_FP16'?`,
      `${FILE}:7: input[5].data_type: 'TYPE_INT23' is not a data_type; did you mean 'TYPE_INT32'?`,
      `${FILE}:8: input[6].data_type: 'COMPLEX' is not a data_type (valid: 'TYPE_BOOL', 'TYPE_UINT8', 'TYPE_UINT16', 'TYPE_UINT32', 'TYPE_UINT64', 'TYPE_INT8', 'TYPE_INT16', 'TYPE_INT32', 'TYPE_INT64', 'TYPE_FP16', 'TYPE_FP32', 'TYPE_FP64', 'TYPE_BF16', 'TYPE_STRING')`,
      `${FILE}:9: instance_group[0].kind: 'CPU' is not a kind; did you mean 'KIND_CPU'?`,
      `${FILE}:9: instance_group[1].kind: 'KIND_TPU' is not a kind; did you mean 'KIND_GPU'?`,
      `${FILE}:10: accelerator: 'gpu' is not an accelerator; did you mean 'cuda'?`,
      `${FILE}:11: optimization.graph.level: 3 is not a level (valid: -1, 0, 1, 2)`,
      `${FILE}:12: platform: 'tensorrt_plan' is not a platform (valid: 'onnxruntime_onnx', 'onnxruntime', 'ensemble')`,
    ]);
  });

  it("missing required fields at the line of the object that lacks them", () => {
    expect(issuesOf(yaml`
      input:
        - name: a
          dims: [4]
        - data_type: TYPE_FP32
    `)).toEqual([
      `${FILE}:2: input[0].data_type: missing required field`,
      `${FILE}:4: input[1].name: missing required field`,
      `${FILE}:4: input[1].dims: missing required field`,
    ]);
  });

  it("bad dims and bounds", () => {
    expect(issuesOf(yaml`
      max_batch_size: -1
      input:
        - { name: a, data_type: TYPE_FP32, dims: [] }
        - name: b
          data_type: TYPE_FP32
          dims:
            - 0
            - -2
      instance_group: [{ count: 0 }]
      version_policy: { specific: { versions: [0] } }
    `)).toEqual([
      `${FILE}:1: max_batch_size: must be ≥ 0, got -1`,
      `${FILE}:3: input[0].dims: must not be empty; for a scalar use dims: [1] with reshape: { shape: [] }`,
      `${FILE}:7: input[1].dims[0]: 0 is not a dimension; use a size ≥ 1, or -1 for a variable one`,
      `${FILE}:8: input[1].dims[1]: -2 is not a dimension; use a size ≥ 1, or -1 for a variable one`,
      `${FILE}:9: instance_group[0].count: must be ≥ 1, got 0`,
      `${FILE}:10: version_policy.specific.versions[0]: 0 is not a version; versions are integers ≥ 1`,
    ]);
  });

  it("a version policy with none or several choices", () => {
    expect(issuesOf("version_policy: {}\n")).toEqual([
      `${FILE}:1: version_policy: needs exactly one of 'latest', 'all' or 'specific'`,
    ]);
    expect(issuesOf("version_policy:\n  all: {}\n  latest: {}\n")).toEqual([
      `${FILE}:1: version_policy: needs exactly one of 'latest', 'all' or 'specific', not 'latest' and 'all'`,
    ]);
  });

  it("a bad parameter value", () => {
    expect(issuesOf("parameters:\n  a: [1]\n  b: { value: x }\n")).toEqual([
      `${FILE}:2: parameters.a: expected a string, number or boolean, or { string_value: ... }`,
      `${FILE}:3: parameters.b.string_value: missing required field`,
      `${FILE}:3: parameters.b.value: unknown field; did you mean 'string_value'?`,
    ]);
  });

  it("on/off parameters that are neither on nor off", () => {
    expect(issuesOf("parameters:\n  weights_in_place: yes please\n  allow_spinning: 2\n  wake_unpacked: later\n")).toEqual([
      `${FILE}:2: parameters.weights_in_place: "yes please" is not one of true, false`,
      `${FILE}:3: parameters.allow_spinning: "2" is not one of true, false`,
      `${FILE}:4: parameters.wake_unpacked: "later" is not one of true, false`,
    ]);
    expect(declared("parameters:\n  weights_in_place: true\n  allow_spinning: \"0\"\n").parameters).toEqual({
      weights_in_place: { string_value: "true" },
      allow_spinning: { string_value: "0" },
    });
  });

  it("duplicate input and output names", () => {
    expect(issuesOf(yaml`
      input:
        - { name: a, data_type: TYPE_FP32, dims: [1] }
        - { name: a, data_type: TYPE_FP32, dims: [1] }
      output:
        - { name: y, data_type: TYPE_FP32, dims: [1] }
        - { name: y, data_type: TYPE_FP32, dims: [1] }
    `)).toEqual([
      `${FILE}:3: input[1].name: duplicate input name 'a' (also input[0])`,
      `${FILE}:6: output[1].name: duplicate output name 'y' (also output[0])`,
    ]);
  });

  it("a reshape whose element count differs from dims", () => {
    expect(issuesOf(yaml`
      input:
        - name: a
          data_type: TYPE_FP32
          dims: [4]
          reshape: { shape: [2, 3] }
        - { name: b, data_type: TYPE_FP32, dims: [-1], reshape: { shape: [2, 3] } }
    `)).toEqual([`${FILE}:5: input[0].reshape.shape: [2,3] has 6 element(s) but dims [4] has 4`]);
  });

  it("dynamic_batching with max_batch_size 0", () => {
    expect(issuesOf("max_batch_size: 0\ndynamic_batching: {}\n")).toEqual([
      `${FILE}:2: dynamic_batching: needs a batch dimension, but max_batch_size is 0; set max_batch_size ≥ 1 or remove dynamic_batching`,
    ]);
  });

  it("a preferred batch size above max_batch_size", () => {
    expect(issuesOf("max_batch_size: 4\ndynamic_batching:\n  preferred_batch_size: [2, 8]\n")).toEqual([
      `${FILE}:3: dynamic_batching.preferred_batch_size[1]: 8 is larger than max_batch_size 4`,
    ]);
  });

  it("gpus on a CPU group", () => {
    expect(issuesOf("instance_group: [{ kind: KIND_CPU, gpus: [0] }]\n")).toEqual([
      `${FILE}:1: instance_group[0].gpus: gpus apply to KIND_GPU and KIND_AUTO groups, not KIND_CPU`,
    ]);
  });

  it("a YAML syntax error at the line the YAML parser names", () => {
    expect(issuesOf("max_batch_size: 8\ninput: [\n  { name: a }\noutput: []\n")).toEqual([
      expect.stringMatching(new RegExp(`^${FILE}:4: invalid YAML: `)),
    ]);
    expect(issuesOf("max_batch_size: 8\nmax_batch_size: 4\n")).toEqual([`${FILE}:2: max_batch_size: duplicate key 'max_batch_size'`]);
    expect(issuesOf("a: 1\n  b: 2\n")[0]).toMatch(new RegExp(`^${FILE}:[12]: invalid YAML: `));
  });

  it("a name that differs from the folder name, alongside other issues", () => {
    expect(issuesOf("name: other\n")).toEqual([
      `${FILE}:1: name: 'other' does not match the folder name 'simple'; rename one or remove name`,
    ]);
    expect(issuesOf("max_batch_size: x\nname: other\n")).toEqual([
      `${FILE}:1: max_batch_size: expected an integer, got 'x'`,
      `${FILE}:2: name: 'other' does not match the folder name 'simple'; rename one or remove name`,
    ]);
  });

  it("identity configs without explicit, matching inputs and outputs", () => {
    expect(issuesOf("backend: identity\n")).toEqual([
      `${FILE}:1: input: backend 'identity' has no model to take inputs from; list them`,
      `${FILE}:1: output: backend 'identity' has no model to take outputs from; list them`,
    ]);
    expect(issuesOf(yaml`
      backend: identity
      platform: onnxruntime_onnx
      input:
        - { name: A, data_type: TYPE_INT32, dims: [16] }
        - { name: B, data_type: TYPE_INT32, dims: [16] }
      output:
        - { name: X, data_type: TYPE_FP32, dims: [8] }
        - { name: Y, data_type: TYPE_INT32, dims: [16] }
    `)).toEqual([
      `${FILE}:2: platform: 'onnxruntime_onnx' does not apply to backend 'identity'; remove platform`,
      `${FILE}:7: output[0].data_type: backend 'identity' returns input 'A' here, so data_type must be TYPE_INT32 like it, not TYPE_FP32`,
      `${FILE}:7: output[0].dims: backend 'identity' returns input 'A' here, so dims must be [16] like it, not [8]`,
    ]);
    expect(issuesOf(yaml`
      backend: identity
      input: [{ name: A, data_type: TYPE_INT32, dims: [16] }]
      output:
        - { name: X, data_type: TYPE_INT32, dims: [16] }
        - { name: Y, data_type: TYPE_INT32, dims: [16] }
    `)).toEqual([
      `${FILE}:3: output: backend 'identity' returns input i as output i, so it needs 1 output(s) for 1 input(s), not 2`,
    ]);
  });

  it("every issue at once, sorted by line", () => {
    const result = parseFunctionConfig("accelerator: gpu\nmax_batch: 1\n", { file: FILE, name: "simple" });
    expect(result.errors.map((e) => e.line)).toEqual([1, 2]);
    expect(result.errors[1]).toEqual({ file: FILE, line: 2, field: "max_batch", problem: "unknown field; did you mean 'max_batch_size'?" });
  });
});

describe("parseFunctionConfig() bounds what a file can cost", () => {
  it("refuses a file over 256 Ki characters before parsing it", () => {
    const text = "parameters:\n" + Array.from({ length: 20_000 }, (_, i) => `  k${i}: { string_value: "v" }`).join("\n");
    const started = performance.now();
    expect(issuesOf(text)).toEqual([`${FILE}:1: the file has ${text.length} characters; a function.yaml may have at most 262144`]);
    expect(performance.now() - started).toBeLessThan(50);
  });

  it("finds duplicate keys in one pass: 6000 keys, one repeated, in well under the quadratic check's time", () => {
    const keys = Array.from({ length: 6000 }, (_, i) => `  k${i}: "v"`);
    keys.push("  k17: again");
    const started = performance.now();
    expect(issuesOf(`parameters:\n${keys.join("\n")}\n`)).toEqual([`${FILE}:6002: k17: duplicate key 'k17'`]);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("refuses aliases that expand past 100 000 values (99 aliases of a 50 000-item list), without expanding them", () => {
    const text = `parameters: {}\nx: &a [${Array(50_000).fill("1").join(",")}]\n${Array.from({ length: 99 }, (_, i) => `y${i}: *a`).join("\n")}\n`;
    expect(issuesOf(text)).toEqual([`${FILE}:1: holds more than 100000 values once its aliases are expanded`]);
    expect(issuesOf("a: &x [1, *x]\n")[0]).toMatch(/alias \*x refers to a value that contains it|invalid YAML/);
  });

  it("refuses nesting deeper than 32 levels, and deeper than the parser can read, naming the limit", () => {
    expect(issuesOf(`a: ${"[".repeat(40)}${"]".repeat(40)}\n`)).toEqual([`${FILE}:1: nests deeper than 32 levels`]);
    expect(issuesOf(`a: ${"[".repeat(5000)}${"]".repeat(5000)}\n`)[0]).toBe(`${FILE}:1: invalid YAML: nests too deeply to read (at most 32 levels)`);
  });

  it("lists 20 problems and counts the rest: 5000 unknown fields give 21 lines, quickly, each of bounded length", () => {
    const started = performance.now();
    const issues = issuesOf(Array.from({ length: 5000 }, (_, i) => `u${i}: 1`).join("\n"));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(issues).toHaveLength(21);
    expect(issues[20]).toBe(`${FILE}:20: and 4980 more problem(s) not listed`);
    const long = issuesOf(`max_batch_size: "${"k".repeat(100_000)}"\n`);
    expect(long[0]!.length).toBeLessThan(600);
    expect(long[0]).toMatch(/… \(\d+ more characters\)$/);
  });
});
