// A/B of JSON tensor decoding and encoding (issue 11), interleaved in one process: per size, the
// reference (JSON.parse of the data, then a typed-array fill; `Array.join` to encode) against
// the new paths. Prints the median µs per call and the spread over rounds.
// Usage: tsx bench/studies/json-codec.ts [rounds=7]
import { decodeJsonData, decodeJsonSpan, encodeJsonData } from "../../runtime/tensor/json-tensor.ts";
import { scanJsonHeader } from "../../runtime/tensor/_json-scan.ts";
import { decodeInferRequest } from "../../runtime/tensor/request-codec.ts";
import type { DataType } from "../../runtime/core/tensor.ts";

const rounds = Number(process.argv[2] ?? 7);
const random = (n: number) => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
const cases: { name: string; datatype: DataType; shape: number[]; data: number[] }[] = [
  { name: "simple (2×16 INT32)", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i * 7) },
  { name: "mlp (512 FP32)", datatype: "FP32", shape: [1, 512], data: Array.from(random(512)) },
  { name: "resnet (150528 FP32)", datatype: "FP32", shape: [1, 3, 224, 224], data: Array.from(random(150528)) },
];

function time(fn: () => unknown, minMs = 150): number {
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < minMs) {
    fn();
    n++;
  }
  return ((performance.now() - t0) * 1000) / n;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const show = (xs: number[]) => `${median(xs).toFixed(1)} µs [${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}]`;

for (const c of cases) {
  const target = { name: "input", datatype: c.datatype, shape: c.shape };
  const text = JSON.stringify({ inputs: [{ name: "input", datatype: c.datatype, shape: c.shape, data: c.data }] });
  const { spans } = scanJsonHeader(text);
  const span = spans[0]!;
  const source = text.slice(span.start, span.end);
  const body = new TextEncoder().encode(text);
  const tensor = { datatype: c.datatype, shape: c.shape, data: decodeJsonSpan(text, span, target) };
  const paths: Record<string, () => unknown> = {
    "decode data: JSON.parse + fill": () => decodeJsonData(target, JSON.parse(source)),
    "decode data: readFlatNumbers": () => decodeJsonSpan(text, span, target),
    "decode request (as served)": () => decodeInferRequest(body),
    "decode request: scan + readFlatNumbers": () => {
      const s = scanJsonHeader(text);
      return decodeJsonSpan(text, s.spans[0]!, target);
    },
    "encode data (as served)": () => encodeJsonData(tensor, { name: "out" }),
  };
  const results: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++) for (const [k, fn] of Object.entries(paths)) (results[k] ??= []).push(time(fn));
  console.log(`${c.name}, ${text.length} chars`);
  for (const [k, xs] of Object.entries(results)) console.log(`  ${k.padEnd(40)} ${show(xs)}`);
}
