import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decodeInferRequest, PARSE_WHOLE_UP_TO, readInferRequest } from "../../../runtime/tensor/request-codec.ts";
import { decodeJsonData, needsLosslessJson } from "../../../runtime/tensor/json-tensor.ts";
import { scanJsonHeader, MAX_HEADER_VALUES } from "../../../runtime/tensor/_json-scan.ts";
import { parseJsonLossless } from "../../../runtime/tensor/_lossless-json.ts";
import type { DataType } from "../../../runtime/core/tensor.ts";
import { jsonText } from "./_helpers.ts";

const utf8 = new TextEncoder();

/** The decoder as it was: parse the whole body (digit-exact), then decode every input's data. */
function reference(text: string) {
  type Parsed = { inputs: { name: string; datatype: DataType; shape: number[]; data: unknown }[] };
  const json = JSON.parse(text) as Parsed;
  return json.inputs.map((i, k) =>
    decodeJsonData(i, needsLosslessJson(i.datatype, i.data) ? (parseJsonLossless(text) as Parsed).inputs[k]!.data : i.data),
  );
}

const scalar: Record<string, fc.Arbitrary<unknown>> = {
  INT32: fc.integer(),
  UINT8: fc.integer({ min: 0, max: 255 }),
  INT64: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((b) => (b >= -(2n ** 53n) && b <= 2n ** 53n ? Number(b) : b)),
  UINT64: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  FP32: fc.float({ noNaN: true, noDefaultInfinity: true }).map((f) => (Object.is(f, -0) ? 0 : f)),
  FP64: fc.double({ noNaN: true, noDefaultInfinity: true }).map((f) => (Object.is(f, -0) ? 0 : f)),
  BOOL: fc.boolean(),
  BYTES: fc.oneof(fc.string({ unit: "binary" }), fc.constantFrom("", "]", '"data":[1,2]', "\\", "{[", "é€😀")),
};

/** Splits a flat array into random nesting (Triton flattens it back). */
function nest(values: unknown[], cuts: number[]): unknown {
  if (cuts.length === 0 || values.length < 2) return values;
  const at = cuts[0]! % values.length;
  return [nest(values.slice(0, at), cuts.slice(1)), ...values.slice(at)];
}

const input = fc
  .record({
    datatype: fc.constantFrom(...Object.keys(scalar)),
    dims: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }),
    cuts: fc.array(fc.nat(), { maxLength: 3 }),
    extra: fc.option(fc.jsonValue(), { nil: undefined }),
  })
  .chain(({ datatype, dims, cuts, extra }) => {
    const count = dims.reduce((a, b) => a * b, 1);
    return fc.array(scalar[datatype]!, { minLength: count, maxLength: count }).map((values) => ({ datatype, dims, data: nest(values, cuts), extra }));
  });

const request = fc.record({
  inputs: fc.uniqueArray(input, { minLength: 1, maxLength: 4, selector: () => Math.random() }),
  unknown: fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }),
  spaces: fc.boolean(),
  scan: fc.boolean(),
});

type Generated = { inputs: { datatype: string; dims: number[]; data: unknown; extra: unknown }[]; unknown: unknown; spaces: boolean; scan: boolean };

function render(r: Generated): string {
  const body = {
    // A long id takes the body past PARSE_WHOLE_UP_TO, onto the scanning path.
    id: r.scan ? `a "data": [${"x".repeat(PARSE_WHOLE_UP_TO)}` : 'a "data": [',
    ...(r.unknown === undefined ? {} : { outputs_hint: r.unknown }),
    inputs: r.inputs.map((i, k) => ({
      ...(i.extra === undefined ? {} : { note: i.extra }),
      name: `in${k}`,
      data: i.data,
      datatype: i.datatype,
      shape: i.dims,
      parameters: { data: "not this one" },
    })),
  };
  if (!r.spaces) return jsonText(body);
  const marked = JSON.stringify(body, (_k, v: unknown) => (typeof v === "bigint" ? `__big__${v}__` : v), "\t ");
  return marked.replace(/"__big__(-?\d+)__"/g, "$1");
}

describe("scanJsonHeader() and the span decoder", () => {
  it("decode every random valid request exactly as parsing the whole body did", () => {
    fc.assert(
      fc.property(request, (r) => {
        const text = render(r);
        const decoded = decodeInferRequest(utf8.encode(text)).inputs.map((i) => i.tensor.data);
        expect(decoded).toEqual(reference(text));
      }),
      { numRuns: 300 },
    );
  });

  it("re-read digit-exact only the INT64/UINT64 inputs that need it (found by the property above)", () => {
    for (const id of ["short", "x".repeat(PARSE_WHOLE_UP_TO)]) {
      const text = `{"id":"${id}","inputs":[{"name":"u","datatype":"UINT64","shape":[1],"data":[9007199254740993]},{"name":"f","datatype":"FP32","shape":[1],"data":[-9007199254740992]}]}`;
      expect(decodeInferRequest(utf8.encode(text)).inputs.map((i) => i.tensor.data)).toEqual([BigUint64Array.of(9007199254740993n), Float32Array.of(-9007199254740992)]);
    }
  });

  it("count the leaves and nested arrays of each input's data without parsing it", () => {
    const text = '{"inputs":[{"name":"a","data":[[1,"x]",{"k":[9,9]}],[],[[true]]]},{"data":"s","name":"b"}],"other":{"data":[1]}}';
    const { json, spans } = scanJsonHeader(text);
    expect(spans[0]).toMatchObject({ leaves: 4, arrays: 4 });
    expect(text.slice(spans[0]!.start, spans[0]!.end)).toBe('[[1,"x]",{"k":[9,9]}],[],[[true]]]');
    expect(spans[1]).toMatchObject({ leaves: -1 });
    expect(json).toEqual({ inputs: [{ name: "a", data: 0 }, { data: 0, name: "b" }], other: { data: [1] } });
  });

  it("keep the last of duplicate inputs arrays and data keys, as JSON.parse does", () => {
    const text = '{"inputs":[{"data":[1,2,3]}],"inputs":[{"data":[1],"data":[1,2]}]}';
    const { spans } = scanJsonHeader(text);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.leaves).toBe(2);
  });

  it("refuse a header with too many values outside the data before JSON.parse builds them", () => {
    const text = `{"inputs":[],"junk":[${"0,".repeat(MAX_HEADER_VALUES)}0]}`;
    expect(() => decodeInferRequest(utf8.encode(text))).toThrow(expect.objectContaining({ code: "RESOURCE_EXHAUSTED" }));
  });

  it("read names, datatypes and shapes, for the model's check, before any data is decoded", () => {
    // The data is malformed: had it been decoded on reading, the error would be about the JSON.
    const text = `{"id":"${"x".repeat(PARSE_WHOLE_UP_TO)}","inputs":[{"name":"x","datatype":"INT32","shape":[2],"data":[1,oops]}]}`;
    const read = readInferRequest(utf8.encode(text));
    expect(read.header.inputs.map(({ name, datatype, shape }) => ({ name, datatype, shape }))).toEqual([{ name: "x", datatype: "INT32", shape: [2] }]);
    expect(() => read.decode()).toThrow(/malformed JSON in request body/);
  });

  it("refuse over --max-elements with 413 before decoding, counting BYTES elements 8 each", () => {
    const bytes = jsonText({ inputs: [{ name: "s", datatype: "BYTES", shape: [100], data: Array(100).fill("") }] });
    expect(() => decodeInferRequest(utf8.encode(bytes), { maxElements: 799 })).toThrow(
      expect.objectContaining({ code: "RESOURCE_EXHAUSTED", message: expect.stringMatching(/input 's' holds 100 BYTES elements, 800 weighted.*--max-elements/) }),
    );
    expect(decodeInferRequest(utf8.encode(bytes), { maxElements: 800 }).inputs[0]!.tensor.data).toHaveLength(100);
    // A lying shape is no way around it: the data's own count is what is weighed.
    const lying = jsonText({ inputs: [{ name: "n", datatype: "INT32", shape: [1], data: Array(1000).fill(0) }] });
    expect(() => decodeInferRequest(utf8.encode(lying), { maxElements: 999 })).toThrow(expect.objectContaining({ code: "RESOURCE_EXHAUSTED" }));
    expect(() => decodeInferRequest(utf8.encode(lying))).toThrow("input 'n': expected 1 elements for shape [1], got 1000");
  });

  it("share one empty buffer for every empty string and keep the others in one arena", () => {
    const text = jsonText({ inputs: [{ name: "s", datatype: "BYTES", shape: [4], data: ["", "ab", "", "é"] }] });
    const data = decodeInferRequest(utf8.encode(text)).inputs[0]!.tensor.data as Uint8Array[];
    expect(data[0]).toBe(data[2]);
    expect(data[1]!.buffer).toBe(data[3]!.buffer);
    expect(data.map((d) => [...d])).toEqual([[], [0x61, 0x62], [], [0xc3, 0xa9]]);
  });
});
