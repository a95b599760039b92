import { afterEach, describe, expect, it } from "vitest";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FUNCTIONS, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// A Triton model repository as it is: config.pbtxt files, no function.yaml. Each function answers
// and reports the config its function.yaml twin in functions/ does.
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const CONFIGS: Record<string, [model: string, pbtxt: string]> = {
  simple: [
    "simple",
    `name: "simple"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  {
    name: "INPUT0"
    data_type: TYPE_INT32
    dims: [ 16 ]
  },
  {
    name: "INPUT1"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
]
output [
  {
    name: "OUTPUT0"
    data_type: TYPE_INT32
    dims: [ 16 ]
  },
  {
    name: "OUTPUT1"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
]
dynamic_batching { }
`,
  ],
  simple_string: [
    "simple_string",
    `name: "simple_string"
backend: "onnxruntime"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_STRING dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_STRING dims: [ 16 ] } ]
dynamic_batching {}
`,
  ],
  // Batching and instance groups as Triton's docs write them; GPU-only tuning is named and ignored.
  simple_tuned: [
    "simple",
    `platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 format: FORMAT_NONE dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] label_filename: "labels.txt" }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
  default_queue_policy { max_queue_size: 64 }
}
optimization { cuda { graphs: true } }
parameters { key: "execution_thread" value: { string_value: "worker" } }
model_warmup [ { name: "zeros" batch_size: 8 inputs { key: "INPUT0" value { data_type: TYPE_INT32 dims: [ 16 ] zero_data: true } } inputs { key: "INPUT1" value { data_type: TYPE_INT32 dims: [ 16 ] random_data: true } } } ]
`,
  ],
  // Partial, as Triton's ONNX Runtime backend completes it: inputs, outputs and batching from the model.
  simple_partial: ["simple", `platform: "onnxruntime_onnx"\n`],
  simple_twice: [
    "",
    `name: "simple_twice"
platform: "ensemble"
max_batch_size: 8
input [ { name: "A" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "B" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "TWO_A" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "TWO_B" data_type: TYPE_INT32 dims: [ 16 ] } ]
ensemble_scheduling {
  step [
    {
      model_name: "simple"
      model_version: -1
      input_map { key: "INPUT0" value: "A" }
      input_map { key: "INPUT1" value: "B" }
      output_map { key: "OUTPUT0" value: "sum" }
      output_map { key: "OUTPUT1" value: "difference" }
    },
    {
      model_name: "simple"
      model_version: -1
      input_map { key: "INPUT0" value: "sum" }
      input_map { key: "INPUT1" value: "difference" }
      output_map { key: "OUTPUT0" value: "TWO_A" }
      output_map { key: "OUTPUT1" value: "TWO_B" }
    }
  ]
}
`,
  ],
};

/** A repository of config.pbtxt functions, each with its twin's model. */
function tritonRepository(): string {
  const repo = tempRepository();
  for (const [name, [model, pbtxt]] of Object.entries(CONFIGS)) {
    mkdirSync(join(repo, name, "1"), { recursive: true });
    if (model) cpSync(join(FUNCTIONS, model, "1", "model.onnx"), join(repo, name, "1", "model.onnx"));
    writeFileSync(join(repo, name, "config.pbtxt"), pbtxt);
  }
  // simple_tuned's OUTPUT0 names its classification labels, as Triton's image models do.
  writeFileSync(join(repo, "simple_tuned", "labels.txt"), Array.from({ length: 16 }, (_, i) => `class ${i}`).join("\n"));
  return repo;
}

const range = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));

async function infer(server: TestServer, name: string, inputs: { name: string; datatype: string; data: unknown[] }[]) {
  const r = await fetch(`${server.url}/v2/models/${name}/infer`, { method: "POST", body: JSON.stringify({ inputs: inputs.map((i) => ({ ...i, shape: [1, 16] })) }) });
  return { status: r.status, json: (await r.json()) as { outputs?: { name: string; data: unknown[] }[]; error?: string } };
}

async function config(server: TestServer, name: string): Promise<Record<string, unknown>> {
  const { name: _, ...rest } = (await (await fetch(`${server.url}/v2/models/${name}/config`)).json()) as Record<string, unknown>;
  // What `auto` measured differs from one load to the next.
  for (const key of Object.keys((rest.parameters ?? {}) as object)) if (key.startsWith("execution_thread_measured")) delete (rest.parameters as Record<string, unknown>)[key];
  return rest;
}

describe("a Triton model repository (config.pbtxt)", () => {
  it("serves each function as its function.yaml twin does: the same answers, the same effective config", async () => {
    const triton = await startServer({ repository: tritonRepository(), controlMode: "none" });
    servers.push(triton);
    const twins = await startServer({ repository: FUNCTIONS, controlMode: "explicit", loadModels: ["simple", "simple_string", "simple_twice"] });
    servers.push(twins);
    const ints = [
      { name: "INPUT0", datatype: "INT32", data: range(16, (i) => i) },
      { name: "INPUT1", datatype: "INT32", data: range(16, () => 3) },
    ];
    const strings = ints.map((i) => ({ ...i, datatype: "BYTES", data: i.data.map(String) }));
    const pair = [
      { name: "A", datatype: "INT32", data: range(16, (i) => i) },
      { name: "B", datatype: "INT32", data: range(16, (i) => 2 * i) },
    ];
    for (const [name, twin, inputs] of [
      ["simple", "simple", ints],
      ["simple_tuned", "simple", ints],
      ["simple_partial", "simple", ints],
      ["simple_string", "simple_string", strings],
      ["simple_twice", "simple_twice", pair],
    ] as const) {
      const [mine, theirs] = await Promise.all([infer(triton, name, inputs), infer(twins, twin, inputs)]);
      expect(mine.status, `${name}: ${mine.json.error}`).toBe(200);
      expect(mine.json.outputs, name).toEqual(theirs.json.outputs);
    }
    // Read from config.pbtxt as function.yaml would give it (a partial one completed from the model).
    expect(await config(triton, "simple")).toEqual(await config(twins, "simple"));
    expect(await config(triton, "simple_partial")).toMatchObject({ max_batch_size: 4, input: [{ name: "INPUT0", dims: [16] }, { name: "INPUT1", dims: [16] }] });
    const tuned = await config(triton, "simple_tuned");
    expect(tuned).toMatchObject({
      instance_group: [{ count: 2, kind: "KIND_CPU" }],
      dynamic_batching: { preferred_batch_size: [4, 8], max_queue_delay_microseconds: 100, default_queue_policy: { max_queue_size: 64 } },
      model_warmup: [{ name: "zeros", batch_size: 8 }],
    });
    expect((tuned.parameters as Record<string, { string_value: string }>).execution_thread!.string_value).toBe("worker");
    expect(tuned.output).toMatchObject([{ name: "OUTPUT0", label_filename: "labels.txt" }, { name: "OUTPUT1", label_filename: "" }]);
    const classes = await fetch(`${triton.url}/v2/models/simple_tuned/infer`, {
      method: "POST",
      body: JSON.stringify({ inputs: ints.map((i) => ({ ...i, shape: [1, 16] })), outputs: [{ name: "OUTPUT0", parameters: { classification: 1 } }] }),
    });
    expect(((await classes.json()) as { outputs: { data: string[] }[] }).outputs[0]!.data).toEqual(["18:15:class 15"]);
  });

  it("answers a function whose config.pbtxt does not load with the file, line, field and nearest name", async () => {
    const repo = tritonRepository();
    writeFileSync(join(repo, "simple", "config.pbtxt"), `name: "simple"\nplatform: "onnxruntime_onnx"\nmax_batch_sise: 8\n`);
    writeFileSync(join(repo, "simple_string", "config.pbtxt"), `max_batch_size: 8\ninput [\n  { name: "INPUT0" data_type: TYPE_FLOAT dims: [ 16 ] }\n]\n`);
    writeFileSync(join(repo, "simple_partial", "config.pbtxt"), `max_batch_size: 8\nmodel_transaction_policy {\n  decoupled: true\n}\n`);
    const server = await startServer({ repository: repo, controlMode: "lazy" });
    servers.push(server);
    const error = async (name: string) => (await fetch(`${server.url}/v2/models/${name}`)).json().then((j: { error?: string }) => j.error);
    expect(await error("simple")).toMatch(/simple\/config\.pbtxt:3: max_batch_sise: unknown field; did you mean 'max_batch_size'\?/);
    expect(await error("simple_string")).toMatch(/simple_string\/config\.pbtxt:3: 'TYPE_FLOAT' is not a DataType; did you mean 'TYPE_FP32'\?/);
    expect(await error("simple_partial")).toMatch(/simple_partial\/config\.pbtxt:3: model_transaction_policy\.decoupled: decoupled models \(several responses per request\) are not supported yet/);
    // The others serve on: simple_tuned (its own config.pbtxt, simple's model) answers an inference.
    // (Not simple_twice: an ensemble over the broken simple is ready, but cannot serve.)
    const served = await infer(server, "simple_tuned", [
      { name: "INPUT0", datatype: "INT32", data: range(16, (i) => i) },
      { name: "INPUT1", datatype: "INT32", data: range(16, () => 3) },
    ]);
    expect(served.status, served.json.error).toBe(200);
    expect(served.json.outputs!.find((o) => o.name === "OUTPUT1")!.data).toEqual(range(16, (i) => i - 3));
  });

  it("prefers function.yaml where a folder has both (tensorfn convert's output)", async () => {
    const repo = tritonRepository();
    writeFileSync(join(repo, "simple", "function.yaml"), "max_batch_size: 2\ndynamic_batching: {}\n");
    const server = await startServer({ repository: repo, controlMode: "lazy" });
    servers.push(server);
    expect((await config(server, "simple")).max_batch_size).toBe(2);
  });
});
