import type { DataType, TensorData } from "../core/tensor.ts";
import { INTEGER_RANGE } from "./datatypes.ts";
import { smallStorage } from "./small-bytes.ts";

/** Exact powers of ten: a product or quotient with one of them rounds correctly (Clinger's fast path). */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

const STORAGE = {
  FP32: Float32Array,
  FP64: Float64Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
} as const;

/**
 * Reads the flat JSON array of numbers `text[start, end)` straight into `count` elements of
 * `datatype`, without building a `number[]`. Policy: this is the happy path only. It returns
 * `undefined` for anything else — nesting, non-numbers, a wrong count, an integer out of range,
 * a float that overflows, any syntax error — and the caller then takes the reference path
 * (`JSON.parse` + `decodeJsonData`), which reports the error in its usual words. So the values
 * are exactly what that path would store: numbers are validated against JSON's grammar and
 * converted by Clinger's fast path (≤ 15 digits, |exponent| ≤ 22: one correctly rounded
 * operation) or else by `Number()` on the token, both correctly rounded like `JSON.parse`;
 * INT64/UINT64 tokens beyond 2^53 become `BigInt` of their digits, as the lossless reader does.
 */
export function readFlatNumbers(text: string, start: number, end: number, datatype: DataType, count: number): TensorData | undefined {
  if (text.charCodeAt(start) !== 0x5b /* [ */ || text.charCodeAt(end - 1) !== 0x5d /* ] */) return undefined;
  const big = datatype === "INT64" || datatype === "UINT64";
  const Storage = big ? undefined : STORAGE[datatype as keyof typeof STORAGE];
  if (!big && Storage === undefined) return undefined;
  const out: TensorData = big ? smallStorage(datatype === "INT64" ? BigInt64Array : BigUint64Array, count) : smallStorage(Storage!, count);
  // One store per element below; TypeScript cannot see that each branch writes its own kind.
  const numbers = out as Float64Array;
  const bigints = out as BigInt64Array;
  const float = datatype === "FP32" || datatype === "FP64";
  const range = INTEGER_RANGE[datatype];
  let i = skipSpace(text, start + 1);
  if (text.charCodeAt(i) === 0x5d) return i === end - 1 && count === 0 ? out : undefined;
  let k = 0;
  for (;;) {
    if (k >= count) return undefined;
    // One number token, checked against JSON's grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
    const token = i;
    let c = text.charCodeAt(i);
    const negative = c === 0x2d;
    if (negative) c = text.charCodeAt(++i);
    // The first 15 significant digits are kept exactly in `mantissa` (< 2^53); later ones only
    // mark the value `truncated`, so the token lies in (mantissa, mantissa + 1) × 10^exponent.
    let mantissa = 0;
    let digits = 0;
    let exponent = 0;
    let truncated = false;
    if (c === 0x30) {
      c = text.charCodeAt(++i);
      if (c >= 0x30 && c <= 0x39) return undefined;
    } else if (c >= 0x31 && c <= 0x39) {
      do {
        if (digits < 15) {
          mantissa = mantissa * 10 + (c - 0x30);
          digits++;
        } else {
          exponent++;
          if (c !== 0x30) truncated = true;
        }
        c = text.charCodeAt(++i);
      } while (c >= 0x30 && c <= 0x39);
    } else return undefined;
    let plain = true;
    if (c === 0x2e /* . */) {
      plain = false;
      c = text.charCodeAt(++i);
      if (!(c >= 0x30 && c <= 0x39)) return undefined;
      do {
        if (digits < 15) {
          mantissa = mantissa * 10 + (c - 0x30);
          if (mantissa !== 0) digits++;
          exponent--;
        } else if (c !== 0x30) truncated = true;
        c = text.charCodeAt(++i);
      } while (c >= 0x30 && c <= 0x39);
    }
    if (c === 0x65 || c === 0x45 /* e E */) {
      plain = false;
      c = text.charCodeAt(++i);
      let sign = 1;
      if (c === 0x2d || c === 0x2b) {
        if (c === 0x2d) sign = -1;
        c = text.charCodeAt(++i);
      }
      if (!(c >= 0x30 && c <= 0x39)) return undefined;
      let e = 0;
      do {
        if (e < 100_000) e = e * 10 + (c - 0x30);
        c = text.charCodeAt(++i);
      } while (c >= 0x30 && c <= 0x39);
      exponent += sign * e;
    }
    let v = NaN;
    if (exponent >= -22 && exponent <= 22) {
      const scale = POW10[exponent < 0 ? -exponent : exponent]!;
      if (!truncated) v = exponent < 0 ? mantissa / scale : mantissa * scale;
      else if (datatype === "FP32") {
        // Rounding is monotonic: when both ends of the interval round to the same FP32 value,
        // so does the token (JSON.parse's FP64 value, then FP32), whatever its dropped digits.
        const lo = Math.fround(exponent < 0 ? mantissa / scale : mantissa * scale);
        const hi = Math.fround(exponent < 0 ? (mantissa + 1) / scale : (mantissa + 1) * scale);
        if (lo === hi) v = lo;
      }
      if (negative) v = -v;
    }
    if (Number.isNaN(v)) v = Number(text.slice(token, i));

    if (float) {
      if (!Number.isFinite(v)) return undefined;
      numbers[k] = v;
      if (numbers[k] === Infinity || numbers[k] === -Infinity) return undefined; // beyond FP32: reported by the reference
    } else if (big) {
      let b: bigint;
      if (Number.isSafeInteger(v)) b = BigInt(v);
      else if (plain && Number.isInteger(v)) b = BigInt(text.slice(token, i));
      else return undefined;
      if (datatype === "INT64" ? b < -0x8000000000000000n || b > 0x7fffffffffffffffn : b < 0n || b > 0xffffffffffffffffn) return undefined;
      bigints[k] = b;
    } else {
      if (!Number.isInteger(v) || v < range![0] || v > range![1]) return undefined;
      numbers[k] = v;
    }
    k++;
    i = skipSpace(text, i);
    c = text.charCodeAt(i);
    if (c === 0x2c /* , */) {
      i = skipSpace(text, i + 1);
      continue;
    }
    return c === 0x5d && i === end - 1 && k === count ? out : undefined;
  }
}

function skipSpace(text: string, i: number): number {
  let c = text.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++i);
  return i;
}
