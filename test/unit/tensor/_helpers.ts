import { expect } from "vitest";
import { RuntimeError } from "../../../runtime/core/errors.ts";
import { parseJsonLossless } from "../../../runtime/tensor/_lossless-json.ts";

const utf8 = new TextEncoder();

/** JSON text where bigint values are written as exact integer literals. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `__big__${v}__` : v)).replace(
    /"__big__(-?\d+)__"/g,
    "$1",
  );
}

/** UTF-8 bytes of `jsonText(value)`. */
export function jsonBody(value: unknown): Uint8Array {
  return utf8.encode(jsonText(value));
}

/** A binary-extension request body: the JSON header followed by the given sections. */
export function binaryBody(header: unknown, sections: Uint8Array[]): { body: Uint8Array; headerLength: number } {
  const json = utf8.encode(jsonText(header));
  const total = sections.reduce((n, s) => n + s.byteLength, json.byteLength);
  const body = new Uint8Array(total);
  body.set(json);
  let at = json.byteLength;
  for (const s of sections) {
    body.set(s, at);
    at += s.byteLength;
  }
  return { body, headerLength: json.byteLength };
}

/** Parses a response body's JSON part, keeping 64-bit integers exact. */
export function parseHeader(body: Uint8Array, headerLength?: number): any {
  const text = new TextDecoder().decode(headerLength === undefined ? body : body.subarray(0, headerLength));
  JSON.parse(text); // must be valid JSON
  return parseJsonLossless(text);
}

/** Asserts `fn` throws an INVALID_ARG RuntimeError whose message contains every fragment. */
export function expectInvalid(fn: () => unknown, ...fragments: string[]): RuntimeError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(RuntimeError);
  const err = caught as RuntimeError;
  expect(err.code).toBe("INVALID_ARG");
  for (const f of fragments) expect(err.message).toContain(f);
  return err;
}

/** Raw little-endian bytes of a TypedArray (a copy). */
export function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
}
