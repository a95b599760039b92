import { describe, expect, it } from "vitest";
import {
  completeConfig,
  completeIdentityConfig,
  type DeclaredConfig,
  identitySignature,
} from "../../../runtime/config/mod.ts";
import { declared, yaml } from "./_helpers.ts";

const identity = yaml`
  backend: identity
  input:
    - { name: INPUT0, data_type: TYPE_INT32, dims: [16] }
    - { name: INPUT1, data_type: TYPE_STRING, dims: [-1] }
  output:
    - { name: OUTPUT0, data_type: TYPE_INT32, dims: [16] }
    - { name: OUTPUT1, data_type: TYPE_STRING, dims: [-1] }
`;

describe("identity configs", () => {
  it("`completeIdentityConfig()` keeps the listed tensors and reads an omitted max_batch_size as 0", () => {
    const config = completeIdentityConfig(declared(identity));
    expect(config.max_batch_size).toBe(0);
    expect(config.platform).toBe("");
    expect(config.output.map((o) => o.name)).toEqual(["OUTPUT0", "OUTPUT1"]);
    expect(completeIdentityConfig(declared(`max_batch_size: 8\n${identity}`)).max_batch_size).toBe(8);
  });

  it("`completeConfig()` delegates to it and ignores the signature", () => {
    const d = declared(`max_batch_size: 8\n${identity}`);
    expect(completeConfig(d, { inputs: [], outputs: [] })).toEqual(completeIdentityConfig(d));
  });

  it("`identitySignature()` derives the model signature from the config, batch dimension included", () => {
    expect(identitySignature(declared(`max_batch_size: 8\n${identity}`))).toEqual({
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [-1, 16] },
        { name: "INPUT1", datatype: "BYTES", shape: [-1, -1] },
      ],
      outputs: [
        { name: "OUTPUT0", datatype: "INT32", shape: [-1, 16] },
        { name: "OUTPUT1", datatype: "BYTES", shape: [-1, -1] },
      ],
    });
    expect(identitySignature(declared(identity)).inputs[0]!.shape).toEqual([16]);
  });

  it("`completeIdentityConfig()` rejects a hand-built config whose output differs from its input", () => {
    const d = declared(identity);
    const bad: DeclaredConfig = { ...d, output: [{ ...d.output[0]!, data_type: "TYPE_FP32" }, d.output[1]!] };
    expect(() => completeIdentityConfig(bad)).toThrow(
      "function 'simple': output[0].data_type: backend 'identity' returns input 'INPUT0' here, so data_type must be TYPE_INT32 like it, not TYPE_FP32",
    );
    expect(() => completeIdentityConfig({ ...d, output: [] })).toThrow(/has no model to take outputs from/);
  });
});
