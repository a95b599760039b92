import { describe, expect, it } from "vitest";
import type { InferRequest, InferResponse } from "../../../runtime/core/inference.ts";
import type { Tensor } from "../../../runtime/core/tensor.ts";
import { decodeInferRequest, encodeInferResponse } from "../../../runtime/tensor/mod.ts";
import { bytesOf, expectInvalid, jsonBody, parseHeader } from "./_helpers.ts";

const utf8 = new TextEncoder();
const text = new TextDecoder();

const A: Tensor = { datatype: "FP32", shape: [3, 2], data: Float32Array.of(1, 1.5, 2, 2.5, 3, 3.5) };
const B: Tensor = { datatype: "INT32", shape: [2], data: Int32Array.of(-1, 7) };
const C: Tensor = { datatype: "BOOL", shape: [1], data: Uint8Array.of(1) };

function response(extra: Partial<InferResponse> = {}): InferResponse {
  return {
    modelName: "m",
    modelVersion: "3",
    outputs: [
      { name: "A", tensor: A },
      { name: "B", tensor: B },
      { name: "C", tensor: C },
    ],
    ...extra,
  };
}

function request(body: Record<string, unknown> = {}): InferRequest {
  return decodeInferRequest(jsonBody({ inputs: [{ name: "IN", datatype: "INT8", shape: [1], data: [1] }], ...body }));
}

describe("encodeInferResponse()", () => {
  it("`encodeInferResponse()` writes every output as flat JSON when nothing asks for binary", () => {
    const { body, headerLength } = encodeInferResponse(response(), request());
    expect(headerLength).toBeUndefined();
    expect(JSON.parse(text.decode(body))).toEqual({
      model_name: "m",
      model_version: "3",
      outputs: [
        { name: "A", datatype: "FP32", shape: [3, 2], data: [1, 1.5, 2, 2.5, 3, 3.5] },
        { name: "B", datatype: "INT32", shape: [2], data: [-1, 7] },
        { name: "C", datatype: "BOOL", shape: [1], data: [true] },
      ],
    });
  });

  it("`encodeInferResponse()` returns only the requested outputs, in the requested order", () => {
    const { body } = encodeInferResponse(response(), request({ outputs: [{ name: "C" }, { name: "A" }] }));
    expect(JSON.parse(text.decode(body)).outputs.map((o: { name: string }) => o.name)).toEqual(["C", "A"]);
  });

  it("`encodeInferResponse()` rejects a requested output the model did not produce, naming it", () => {
    expectInvalid(() => encodeInferResponse(response(), request({ outputs: [{ name: "Z" }] })), "'Z'", "'m'");
  });

  it("`encodeInferResponse()` writes the §1.6 example: FP32 [3,2] as 24 binary bytes after the header", () => {
    const { body, headerLength } = encodeInferResponse(
      response(),
      request({ outputs: [{ name: "A", parameters: { binary_data: true } }] }),
    );
    expect(headerLength).toBeDefined();
    const header = parseHeader(body, headerLength);
    expect(header.outputs).toEqual([{ name: "A", datatype: "FP32", shape: [3, 2], parameters: { binary_data_size: 24 } }]);
    expect(body.byteLength).toBe(headerLength! + 24);
    expect(body.subarray(headerLength)).toEqual(bytesOf(A.data as Float32Array));
  });

  it("`encodeInferResponse()` honours binary_data_output without outputs, appending sections in output order", () => {
    const { body, headerLength } = encodeInferResponse(response(), request({ parameters: { binary_data_output: true } }));
    const header = parseHeader(body, headerLength);
    expect(header.outputs.map((o: { parameters: unknown }) => o.parameters)).toEqual([
      { binary_data_size: 24 },
      { binary_data_size: 8 },
      { binary_data_size: 1 },
    ]);
    const tail = body.subarray(headerLength);
    expect(tail).toEqual(Uint8Array.from([...bytesOf(A.data as Float32Array), ...bytesOf(B.data as Int32Array), 1]));
  });

  it("`encodeInferResponse()` lets per-output binary_data override binary_data_output", () => {
    const req = request({
      parameters: { binary_data_output: true },
      outputs: [{ name: "B", parameters: { binary_data: false } }, { name: "A" }],
    });
    const { body, headerLength } = encodeInferResponse(response(), req);
    const header = parseHeader(body, headerLength);
    expect(header.outputs[0]).toEqual({ name: "B", datatype: "INT32", shape: [2], data: [-1, 7] });
    expect(header.outputs[1].parameters).toEqual({ binary_data_size: 24 });
    expect(body.byteLength).toBe(headerLength! + 24);
  });

  it("`encodeInferResponse()` echoes the request id and omits it when absent", () => {
    const withId = encodeInferResponse(response(), request({ id: "req-7" }));
    expect(JSON.parse(text.decode(withId.body)).id).toBe("req-7");
    const own = encodeInferResponse(response({ id: "resp" }), request({ id: "req-7" }));
    expect(JSON.parse(text.decode(own.body)).id).toBe("resp");
    const none = encodeInferResponse(response(), request());
    expect(JSON.parse(text.decode(none.body))).not.toHaveProperty("id");
  });

  it("`encodeInferResponse()` omits an empty model_version and writes response parameters", () => {
    const { body } = encodeInferResponse(response({ modelVersion: "", parameters: { triton_final_response: true } }), request());
    const parsed = JSON.parse(text.decode(body));
    expect(parsed).not.toHaveProperty("model_version");
    expect(parsed.parameters).toEqual({ triton_final_response: true });
  });

  it("`encodeInferResponse()` prints INT64 and UINT64 beyond 2^53 digit-exact", () => {
    const out: InferResponse = {
      modelName: "m",
      modelVersion: "1",
      outputs: [
        { name: "I", tensor: { datatype: "INT64", shape: [2], data: BigInt64Array.of(-9223372036854775808n, 9007199254740993n) } },
        { name: "U", tensor: { datatype: "UINT64", shape: [1], data: BigUint64Array.of(18446744073709551615n) } },
      ],
    };
    const { body } = encodeInferResponse(out, request());
    const raw = text.decode(body);
    expect(raw).toContain('"data":[-9223372036854775808,9007199254740993]');
    expect(raw).toContain('"data":[18446744073709551615]');
    expect(parseHeader(body).outputs[0].data).toEqual([-9223372036854775808n, 9007199254740993n]);
  });

  it("`encodeInferResponse()` writes NaN and Infinity as null, which JSON can carry", () => {
    const out = response({
      outputs: [{ name: "F", tensor: { datatype: "FP64", shape: [3], data: Float64Array.of(NaN, 1, -Infinity) } }],
    });
    expect(JSON.parse(text.decode(encodeInferResponse(out, request()).body)).outputs[0].data).toEqual([null, 1, null]);
  });

  it("`encodeInferResponse()` decodes BYTES outputs as UTF-8 strings in JSON", () => {
    const out = response({
      outputs: [{ name: "S", tensor: { datatype: "BYTES", shape: [2], data: [utf8.encode("hé"), utf8.encode('q"\u0000')] } }],
    });
    expect(JSON.parse(text.decode(encodeInferResponse(out, request()).body)).outputs[0].data).toEqual(["hé", 'q"\u0000']);
  });

  it("`encodeInferResponse()` refuses FP16, BF16 and non-UTF-8 BYTES as JSON, suggesting binary_data", () => {
    for (const datatype of ["FP16", "BF16"] as const) {
      const out = response({ outputs: [{ name: "H", tensor: { datatype, shape: [1], data: Uint16Array.of(0x3c00) } }] });
      expectInvalid(() => encodeInferResponse(out, request()), "output 'H'", datatype, "binary_data");
      const bin = encodeInferResponse(out, request({ outputs: [{ name: "H", parameters: { binary_data: true } }] }));
      expect(bin.body.subarray(bin.headerLength)).toEqual(Uint8Array.of(0x00, 0x3c));
    }
    const bad = response({ outputs: [{ name: "S", tensor: { datatype: "BYTES", shape: [1], data: [Uint8Array.of(0xff)] } }] });
    expectInvalid(() => encodeInferResponse(bad, request()), "output 'S'", "UTF-8", "binary_data");
  });

  it("`encodeInferResponse()` sets headerLength to the UTF-8 byte length of the JSON part", () => {
    const out = response({ modelName: "модель" });
    const { body, headerLength } = encodeInferResponse(out, request({ parameters: { binary_data_output: true } }));
    const header = parseHeader(body, headerLength);
    expect(header.model_name).toBe("модель");
    expect(body.byteLength - headerLength!).toBe(24 + 8 + 1);
  });
});
