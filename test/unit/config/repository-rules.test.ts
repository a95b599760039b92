import { describe, expect, it } from "vitest";
import { defaultLoadLimits, formatIssue, functionNameProblem, modelPathProblem, parseFunctionConfig, parseTritonJsonConfig, parseVersion } from "../../../runtime/config/mod.ts";

const limits = defaultLoadLimits(2); // threads ceiling: 8

function overLimits(yaml: string): string[] {
  return parseFunctionConfig(yaml, { file: "f.yaml", name: "simple", limits }).errors.map(formatIssue);
}

describe("`functionNameProblem()`", () => {
  it("accepts Triton-style names", () => {
    for (const name of ["simple", "resnet-50", "a.b_c", "A9", "_x", "x".repeat(128)]) expect(functionNameProblem(name)).toBeUndefined();
  });

  it("refuses path separators, dot names, control characters, ANSI escapes and overlong names, quoting them safely", () => {
    for (const name of ["", "a/b", "..", ".hidden", "a\u0000b", "a\nINFO forged", "\u001b[31mred", "a b", "<img>", "x".repeat(129)]) {
      const problem = functionNameProblem(name);
      expect(problem, name).toMatch(/function names use only A-Z, a-z, 0-9, '_', '.' and '-'/);
      expect(problem).not.toMatch(/[\u0000-\u001f]/);
    }
  });
});

describe("`parseVersion()`", () => {
  it("reads decimal versions up to 2^31−1, ignores other names and flags bigger numbers", () => {
    expect(parseVersion("1")).toBe(1);
    expect(parseVersion("2147483647")).toBe(2147483647);
    expect(parseVersion("2147483648")).toBe("too-large");
    expect(parseVersion("99999999999999999999")).toBe("too-large");
    expect(parseVersion("01")).toBeUndefined();
    expect(parseVersion("v2")).toBeUndefined();
  });
});

describe("`modelPathProblem()` and default_model_filename", () => {
  it("accepts plain relative paths", () => {
    for (const path of ["model.onnx", "weights/model.onnx"]) expect(modelPathProblem(path)).toBeUndefined();
  });

  it("refuses '..', absolute paths, empty segments and control characters", () => {
    for (const path of ["../../../../etc/model.onnx", "/tmp/model.onnx", "a/../b", "./m.onnx", "a//b", "C:/m.onnx", "a\\..\\b", "m\n.onnx"]) {
      expect(modelPathProblem(path), path).toBeDefined();
    }
    expect(overLimits("default_model_filename: ../../other/1/model.onnx\n")).toEqual([
      `f.yaml:1: default_model_filename: "../../other/1/model.onnx" leaves or skips a folder ('..', '.' or '//'); name a file inside the version folder, such as model.onnx`,
    ]);
    expect(() => parseTritonJsonConfig({ default_model_filename: "/etc/passwd" }, "simple")).toThrow(/default_model_filename: "\/etc\/passwd" is absolute/);
  });
});

describe("load limits", () => {
  it("refuses values over the server's ceilings, naming the field, the value and the flag", () => {
    expect(overLimits("instance_group: [{ count: 10000 }]\n")).toEqual([
      "f.yaml:1: instance_group[0].count: 10000 is over the server's ceiling of 64 instances per function (--max-instances)",
    ]);
    expect(overLimits("parameters: { intra_op_thread_count: '2000' }\n")).toEqual([
      "f.yaml:1: parameters.intra_op_thread_count: 2000 is over the server's ceiling of 8 threads (--max-threads)",
    ]);
    expect(overLimits("parameters: { inter_op_thread_count: lots }\n")[0]).toMatch(/inter_op_thread_count: "lots" is not a thread count/);
    expect(overLimits("max_batch_size: 1000000000\n")).toEqual([
      "f.yaml:1: max_batch_size: 1000000000 is over the server's ceiling of 65536 (--max-batch-size)",
    ]);
    expect(overLimits("scale: { max_instances: 1000 }\n")[0]).toMatch(/scale.max_instances: 1000 is over .* \(--max-instances\)/);
    const warmup = "model_warmup: [{ batch_size: 20000000, inputs: { x: { data_type: TYPE_FP32, dims: [4], zero_data: true } } }]\n";
    expect(overLimits(warmup)).toEqual([
      "f.yaml:1: model_warmup[0].batch_size: 20000000 makes a sample of 80000000 elements, over the server's ceiling of 16777216 elements per warm-up sample (--max-warmup-elements)",
    ]);
    expect(() => parseTritonJsonConfig({ instance_group: [{ count: 10000 }] }, "simple", limits)).toThrow(/instance_group\[0\]\.count: 10000 .*--max-instances/);
  });

  it("accepts values at the ceilings, and checks nothing without limits", () => {
    expect(overLimits("instance_group: [{ count: 64 }]\nparameters: { intra_op_thread_count: 8 }\nmax_batch_size: 65536\n")).toEqual([]);
    expect(parseFunctionConfig("instance_group: [{ count: 10000 }]\n", { file: "f.yaml", name: "simple" }).errors).toEqual([]);
  });

  it("bounds version_policy's specific versions", () => {
    expect(overLimits("version_policy: { specific: { versions: [3000000000] } }\n")[0]).toMatch(/versions are integers up to 2147483647/);
  });
});

describe("model_warmup against declared inputs", () => {
  it("names an unknown input, a wrong data type and dims that do not fit", () => {
    const yaml = (inputs: string) => `max_batch_size: 4\ninput: [{ name: x, data_type: TYPE_FP32, dims: [-1, 2] }]\nmodel_warmup: [{ name: w, inputs: { ${inputs} } }]\n`;
    expect(overLimits(yaml("y: { data_type: TYPE_FP32, dims: [1, 2], zero_data: true }"))[0]).toMatch(/model_warmup\[0\]\.inputs\.y: 'y' is not an input \(inputs: x\)/);
    expect(overLimits(yaml("x: { data_type: TYPE_INT32, dims: [1, 2], zero_data: true }"))[0]).toMatch(/data_type: TYPE_INT32 does not match input 'x' \(TYPE_FP32\)/);
    expect(overLimits(yaml("x: { data_type: TYPE_FP32, dims: [1, 3], zero_data: true }"))[0]).toMatch(/dims: \[1, ?3\] does not fit input 'x' dims/);
    expect(overLimits(yaml("x: { data_type: TYPE_FP32, dims: [5, 2], zero_data: true }"))).toEqual([]);
  });
});

describe("rate_limit totals", () => {
  it("refuses total_* without key_header", () => {
    expect(overLimits("rate_limit: { requests_per_second: 1, total_requests_per_second: 5 }\n")[0]).toMatch(/total_requests_per_second: applies with key_header only/);
  });
});
