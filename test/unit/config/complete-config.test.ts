import { defaultDynamicBatching } from "../../../runtime/config/mod.ts";
import { describe, expect, it } from "vitest";
import { completeConfig, type DeclaredConfig } from "../../../runtime/config/mod.ts";
import type { ModelSignature } from "../../../runtime/core/mod.ts";
import { RuntimeError } from "../../../runtime/core/mod.ts";
import { declared, sig, yaml } from "./_helpers.ts";

const batchable: ModelSignature = {
  inputs: [sig("INPUT0:INT32:[-1,16]"), sig("INPUT1:INT32:[-1,16]")],
  outputs: [sig("OUTPUT0:INT32:[-1,16]"), sig("OUTPUT1:INT32:[-1,16]")],
};

/** The INVALID_ARG message completeConfig throws. */
function rejection(config: DeclaredConfig, signature: ModelSignature, options?: { defaultMaxBatchSize?: number }): string {
  try {
    completeConfig(config, signature, options);
  } catch (error) {
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as RuntimeError).code).toBe("INVALID_ARG");
    return (error as Error).message;
  }
  throw new Error("completeConfig() did not throw");
}

describe("completeConfig() completes", () => {
  it("an empty config from a batchable model: tensors without the batch dim, max_batch_size 4, dynamic batching on", () => {
    const config = completeConfig(declared(""), batchable);
    expect(config.max_batch_size).toBe(4);
    expect(config.dynamic_batching).toEqual(defaultDynamicBatching());
    expect(config.input).toEqual([
      { name: "INPUT0", data_type: "TYPE_INT32", dims: [16], optional: false },
      { name: "INPUT1", data_type: "TYPE_INT32", dims: [16], optional: false },
    ]);
    expect(config.output.map((o) => [o.name, o.dims])).toEqual([
      ["OUTPUT0", [16]],
      ["OUTPUT1", [16]],
    ]);
  });

  it("an empty config from a model with a fixed first dimension: max_batch_size 0, full shapes, no batching", () => {
    const config = completeConfig(declared(""), {
      inputs: [sig("data:FP32:[1,3,224,224]")],
      outputs: [sig("prob:FP32:[1,1000,1,1]")],
    });
    expect(config.max_batch_size).toBe(0);
    expect(config.dynamic_batching).toBeUndefined();
    expect(config.input[0]!.dims).toEqual([1, 3, 224, 224]);
    expect(config.output[0]!.dims).toEqual([1, 1000, 1, 1]);
  });

  it("unknown model dimensions as -1 and BYTES as TYPE_STRING", () => {
    const config = completeConfig(declared(""), {
      inputs: [sig("text:BYTES:[-1,-1]")],
      outputs: [sig("ids:INT64:[-1,-1,8]")],
    });
    expect(config.input[0]).toEqual({ name: "text", data_type: "TYPE_STRING", dims: [-1], optional: false });
    expect(config.output[0]!.dims).toEqual([-1, 8]);
  });

  it("scalars per batch item as dims [1] with reshape { shape: [] }", () => {
    const config = completeConfig(declared(""), { inputs: [sig("x:FP32:[-1]")], outputs: [sig("y:FP32:[]")] });
    expect(config.max_batch_size).toBe(0);
    expect(config.output[0]).toEqual({ name: "y", data_type: "TYPE_FP32", dims: [1], reshape: { shape: [] }, optional: false });
    const batched = completeConfig(declared(""), { inputs: [sig("x:FP32:[-1]")], outputs: [sig("y:FP32:[-1]")] });
    expect(batched.input[0]).toEqual({ name: "x", data_type: "TYPE_FP32", dims: [1], reshape: { shape: [] }, optional: false });
  });

  it("with the default max batch size given, and without dynamic batching when it is 1", () => {
    expect(completeConfig(declared(""), batchable, { defaultMaxBatchSize: 16 }).max_batch_size).toBe(16);
    const one = completeConfig(declared(""), batchable, { defaultMaxBatchSize: 1 });
    expect(one.max_batch_size).toBe(1);
    expect(one.dynamic_batching).toBeUndefined();
  });

  it("keeps a declared dynamic_batching when max_batch_size is inferred", () => {
    const config = completeConfig(declared("dynamic_batching: { max_queue_delay_microseconds: 500 }"), batchable);
    expect(config.max_batch_size).toBe(4);
    expect(config.dynamic_batching?.max_queue_delay_microseconds).toBe(500);
  });

  it("keeps an explicit max_batch_size and does not turn dynamic batching on", () => {
    const config = completeConfig(declared("max_batch_size: 8"), batchable);
    expect(config.max_batch_size).toBe(8);
    expect(config.dynamic_batching).toBeUndefined();
    const zero = completeConfig(declared("max_batch_size: 0"), batchable);
    expect(zero.max_batch_size).toBe(0);
    expect(zero.input[0]!.dims).toEqual([-1, 16]);
  });

  it("omitted max_batch_size as 0 when listed dims already include the batch dimension", () => {
    const config = completeConfig(
      declared(yaml`
        input: [{ name: INPUT0, data_type: TYPE_INT32, dims: [-1, 16] }, { name: INPUT1, data_type: TYPE_INT32, dims: [-1, 16] }]
      `),
      batchable,
    );
    expect(config.max_batch_size).toBe(0);
    expect(config.output[0]!.dims).toEqual([-1, 16]);
  });

  it("listed tensors as written, stricter than the model where they choose", () => {
    const config = completeConfig(
      declared(yaml`
        max_batch_size: 8
        input:
          - { name: x, data_type: TYPE_FP32, dims: [3, 224, 224] }
        output:
          - { name: probs, data_type: TYPE_FP32, dims: [1000] }
      `),
      {
        inputs: [sig("x:FP32:[-1,3,-1,-1]")],
        outputs: [sig("probs:FP32:[-1,1000]"), sig("features:FP32:[-1,2048]")],
      },
    );
    expect(config.input[0]!.dims).toEqual([3, 224, 224]);
    expect(config.output.map((o) => o.name)).toEqual(["probs"]);
  });

  it("inputs from the model and listed outputs when only outputs are listed", () => {
    const config = completeConfig(declared("output: [{ name: OUTPUT1, data_type: TYPE_INT32, dims: [16] }]"), batchable);
    expect(config.input.map((i) => i.name)).toEqual(["INPUT0", "INPUT1"]);
    expect(config.output.map((o) => o.name)).toEqual(["OUTPUT1"]);
  });

  it("a reshape compared to the model instead of dims (Triton's densenet example)", () => {
    const config = completeConfig(
      declared(yaml`
        max_batch_size: 0
        input: [{ name: data_0, data_type: TYPE_FP32, dims: [3, 224, 224], reshape: { shape: [1, 3, 224, 224] } }]
        output: [{ name: prob_1, data_type: TYPE_FP32, dims: [1000], reshape: { shape: [1, 1000, 1, 1] } }]
      `),
      { inputs: [sig("data_0:FP32:[1,3,224,224]")], outputs: [sig("prob_1:FP32:[1,1000,1,1]")] },
    );
    expect(config.input[0]!.reshape).toEqual({ shape: [1, 3, 224, 224] });
  });

  it("without sharing arrays with the declared config", () => {
    const source = declared("max_batch_size: 2\ninput: [{ name: INPUT0, data_type: TYPE_INT32, dims: [16] }, { name: INPUT1, data_type: TYPE_INT32, dims: [16] }]");
    const config = completeConfig(source, batchable);
    config.input[0]!.dims.push(1);
    expect(source.input[0]!.dims).toEqual([16]);
  });
});

describe("completeConfig() rejects, naming both sides,", () => {
  const simple = (body: string) => declared(`max_batch_size: 8\n${body}`);

  it("a data type that differs from the model's", () => {
    const config = simple(yaml`
      input:
        - { name: INPUT0, data_type: TYPE_FP32, dims: [16] }
        - { name: INPUT1, data_type: TYPE_INT32, dims: [16] }
    `);
    expect(rejection(config, batchable)).toBe(
      "function 'simple' input 'INPUT0': function.yaml says data_type TYPE_FP32 but model.onnx declares TYPE_INT32",
    );
  });

  it("a dimension that differs from the model's", () => {
    const config = simple(yaml`
      input:
        - { name: INPUT0, data_type: TYPE_INT32, dims: [16] }
        - { name: INPUT1, data_type: TYPE_INT32, dims: [16] }
    `);
    const signature = { ...batchable, inputs: [sig("INPUT0:INT32:[-1,8]"), sig("INPUT1:INT32:[-1,16]")] };
    expect(rejection(config, signature)).toBe(
      "function 'simple' input 'INPUT0': function.yaml says dims [16] (shape [-1,16]) but model.onnx declares [-1,8]",
    );
  });

  it("a variable dimension where the model's is fixed", () => {
    const config = declared("max_batch_size: 0\noutput: [{ name: y, data_type: TYPE_FP32, dims: [-1] }]");
    expect(rejection(config, { inputs: [sig("x:FP32:[4]")], outputs: [sig("y:FP32:[4]")] })).toBe(
      "function 'simple' output 'y': function.yaml says dims [-1] but model.onnx declares [4]",
    );
  });

  it("a rank that differs from the model's, saying when max_batch_size was inferred", () => {
    const explicit = simple("output: [{ name: OUTPUT0, data_type: TYPE_INT32, dims: [4, 4] }]");
    expect(rejection(explicit, batchable)).toBe(
      "function 'simple' output 'OUTPUT0': function.yaml says dims [4,4] (shape [-1,4,4]) but model.onnx declares [-1,16] (rank 3 against 2)",
    );
    const inferred = declared("dynamic_batching: {}\noutput: [{ name: OUTPUT0, data_type: TYPE_INT32, dims: [-1, 16] }]");
    expect(rejection(inferred, batchable)).toBe(
      "function 'simple' output 'OUTPUT0': function.yaml says dims [-1,16] (shape [-1,-1,16]) but model.onnx declares [-1,16] (rank 3 against 2); max_batch_size 4 was inferred from model.onnx",
    );
  });

  it("a reshape that does not fit the model", () => {
    const config = declared(yaml`
      max_batch_size: 0
      input: [{ name: x, data_type: TYPE_FP32, dims: [6], reshape: { shape: [2, 3] } }]
    `);
    expect(rejection(config, { inputs: [sig("x:FP32:[3,2]")], outputs: [sig("y:FP32:[1]")] })).toBe(
      "function 'simple' input 'x': function.yaml says reshape.shape [2,3] but model.onnx declares [3,2]",
    );
  });

  it("an input the model does not have, and a model input the config leaves out", () => {
    const config = simple("input: [{ name: IMAGE, data_type: TYPE_FP32, dims: [3] }]");
    expect(rejection(config, { inputs: [sig("x:FP32:[-1,3]")], outputs: [sig("y:FP32:[-1]")] })).toBe(
      "function 'simple': function.yaml names input 'IMAGE' that model.onnx does not have (it has: x); " +
        "model.onnx input 'x' is missing from function.yaml (it lists: IMAGE); list every model input, or none to take them from the model",
    );
  });

  it("an output the model does not have", () => {
    const config = declared("default_model_filename: net.onnx\noutput: [{ name: LOGITS, data_type: TYPE_FP32, dims: [10] }]");
    expect(rejection(config, { inputs: [sig("x:FP32:[-1,3]")], outputs: [sig("y:FP32:[-1,10]"), sig("z:FP32:[-1]")] })).toBe(
      "function 'simple': function.yaml names output 'LOGITS' that net.onnx does not have (it has: y, z)",
    );
  });

  it("max_batch_size > 0 against a fixed first dimension", () => {
    expect(rejection(declared("max_batch_size: 8"), { inputs: [sig("x:FP32:[1,16]")], outputs: [sig("y:FP32:[-1,16]")] })).toBe(
      "function 'simple': function.yaml says max_batch_size 8 but model.onnx input 'x' has shape [1,16], whose first dimension is not variable (-1), so it cannot batch; set max_batch_size: 0",
    );
    expect(rejection(declared("max_batch_size: 2"), { inputs: [sig("x:FP32:[-1,16]")], outputs: [sig("y:FP32:[]")] })).toMatch(
      /model.onnx output 'y' has shape \[\], whose first dimension is not variable/,
    );
  });

  it("dynamic_batching when the model cannot batch", () => {
    expect(rejection(declared("dynamic_batching: {}"), { inputs: [sig("x:FP32:[1,16]")], outputs: [sig("y:FP32:[1,16]")] })).toBe(
      "function 'simple': function.yaml enables dynamic_batching but model.onnx input 'x' has shape [1,16], whose first dimension is not variable (-1), so it cannot batch",
    );
  });

  it("a preferred batch size above the inferred max_batch_size", () => {
    expect(rejection(declared("dynamic_batching: { preferred_batch_size: [8] }"), batchable)).toBe(
      "function 'simple': dynamic_batching.preferred_batch_size 8 is larger than max_batch_size 4 (inferred; set max_batch_size)",
    );
  });
});
