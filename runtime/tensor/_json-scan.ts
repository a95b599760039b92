/**
 * Where one input's JSON `data` sits in the header text, found without materialising it.
 * `leaves` counts scalar values at any depth (what Triton's flattening yields), `arrays` the
 * nested arrays inside it (each one costs a JS array once parsed). Both are exact for valid JSON;
 * for malformed data they are what a parser would build before failing, at most.
 */
export interface DataSpan {
  start: number;
  end: number;
  /** -1 when `data` is not an array (the decoder then reports it as such). */
  leaves: number;
  arrays: number;
}

/** The header with every `inputs[i].data` replaced by `0`, and the spans those values had. */
export interface ScannedHeader {
  /** `JSON.parse` of the header with the data spans cut out; small whatever the body holds. */
  json: unknown;
  /** By input index, for the `inputs` array `JSON.parse` keeps (the last one, like duplicate keys). */
  spans: (DataSpan | undefined)[];
}

/** Most values a header may hold outside its inputs' `data`: outputs and parameters are small. */
export const MAX_HEADER_VALUES = 65_536;

const FLAT = /\[[-+.,\s\deEtrufalsn]*\]/y;

type Role = "root" | "inputs" | "input" | "other";
interface Frame {
  object: boolean;
  role: Role;
  /** Array element index, or, in an object, the last key read. */
  index: number;
  key: string;
  expectKey: boolean;
}

/**
 * Scans a request's JSON header in one pass over its text. Policy: only structure is tracked here
 * (brackets, strings, keys); the text outside the data spans is then parsed by `JSON.parse`,
 * which validates it, and each span is validated when it is decoded, after the request was
 * checked against the model. So a body of millions of values is refused for its shape before any
 * of them exists as a JS value. Throws plain `Error` (caller maps it) only for structure that
 * cannot be JSON at all; `MAX_HEADER_VALUES` bounds what `JSON.parse` builds outside the spans.
 */
export function scanJsonHeader(text: string): ScannedHeader {
  const stack: Frame[] = [];
  const cuts: DataSpan[] = [];
  let spans: (DataSpan | undefined)[] = [];
  let otherValues = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      if (top?.object && top.expectKey) {
        top.key = stringValue(text, i, end);
        top.expectKey = false;
      } else otherValues++;
      i = end + 1;
      continue;
    }
    if (c === 0x3a /* : */ && top?.object && top.role === "input" && top.key === "data") {
      // The value of inputs[i].data: record its span and step over it.
      let start = i + 1;
      while (start < n && isSpace(text.charCodeAt(start))) start++;
      const span = scanValue(text, start);
      cuts.push(span);
      spans[top.index] = span;
      i = span.end;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const object = c === 0x7b;
      let role: Role = "other";
      if (top?.role === "root" && top.key === "inputs" && !object) role = "inputs";
      else if (top?.role === "inputs" && object) role = "input";
      else if (top === undefined && object) role = "root";
      if (role === "inputs") spans = [];
      // An object frame keeps its place in the parent array (which input it is); arrays count from 0.
      stack.push({ object, role, index: object && top && !top.object ? top.index : 0, key: "", expectKey: object });
      otherValues++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      if (top?.object) top.expectKey = true;
      else if (top) top.index++;
    } else if (c !== 0x3a && !isSpace(c)) {
      // A number or literal: skip to its end.
      otherValues++;
      while (i + 1 < n && !isDelimiter(text.charCodeAt(i + 1))) i++;
    }
    i++;
  }
  if (otherValues > MAX_HEADER_VALUES) throw new HeaderTooLargeError(otherValues);
  return { json: JSON.parse(cutOut(text, cuts)), spans };
}

/** Too many values outside the inputs' data: refused before `JSON.parse` builds them. */
export class HeaderTooLargeError extends Error {
  readonly values: number;
  constructor(values: number) {
    super(`the request header holds ${values} values outside inputs' data, more than ${MAX_HEADER_VALUES}`);
    this.values = values;
  }
}

/**
 * Steps over one JSON value starting at `start`, counting the leaves and nested arrays of an
 * array. Strings are skipped with `indexOf`; everything else is one comparison per character.
 * An object inside data is one (bad) leaf, as the decoder reports it, skipped whole.
 */
function scanValue(text: string, start: number): DataSpan {
  const first = text.charCodeAt(start);
  if (first !== 0x5b /* [ */) return { start, end: skipValue(text, start), leaves: -1, arrays: 0 };
  // The common case, a flat array of numbers or booleans: the regex finds its end natively and
  // only commas need counting. Anything the pattern lets through that is not JSON fails to parse later.
  FLAT.lastIndex = start;
  if (FLAT.test(text)) {
    const end = FLAT.lastIndex;
    let commas = 0;
    for (let i = text.indexOf(",", start); i >= 0 && i < end; i = text.indexOf(",", i + 1)) commas++;
    const empty = commas === 0 && text.slice(start + 1, end - 1).trim() === "";
    return { start, end, leaves: empty ? 0 : commas + 1, arrays: 0 };
  }
  const n = text.length;
  let depth = 0;
  let leaves = 0;
  let arrays = 0;
  let expectValue = false;
  for (let i = start; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b) {
      depth++;
      arrays++;
      expectValue = true;
    } else if (c === 0x5d) {
      if (--depth === 0) return { start, end: i + 1, leaves, arrays: arrays - 1 };
      expectValue = false;
    } else if (c === 0x2c) {
      expectValue = true;
    } else if (!isSpace(c)) {
      if (expectValue) leaves++;
      expectValue = false;
      i = skipValue(text, i) - 1;
    }
  }
  throw new Error("the JSON text ends inside an input's data");
}

/** End (exclusive) of the scalar, string or balanced container starting at `i`. */
function skipValue(text: string, i: number): number {
  const n = text.length;
  const c = text.charCodeAt(i);
  if (c === 0x22) return stringEnd(text, i) + 1;
  if (c !== 0x5b && c !== 0x7b) {
    while (i < n && !isDelimiter(text.charCodeAt(i))) i++;
    return i;
  }
  let depth = 0;
  for (; i < n; i++) {
    const d = text.charCodeAt(i);
    if (d === 0x22) i = stringEnd(text, i);
    else if (d === 0x5b || d === 0x7b) depth++;
    else if ((d === 0x5d || d === 0x7d) && --depth === 0) return i + 1;
  }
  throw new Error("the JSON text ends inside an input's data");
}

/** Index of the quote that closes the string opening at `open`. */
function stringEnd(text: string, open: number): number {
  let j = open;
  for (;;) {
    j = text.indexOf('"', j + 1);
    if (j < 0) throw new Error("the JSON text ends inside a string");
    let slashes = 0;
    while (text.charCodeAt(j - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return j;
  }
}

function stringValue(text: string, open: number, close: number): string {
  const raw = text.slice(open + 1, close);
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(text.slice(open, close + 1)) as string;
  } catch {
    return raw; // JSON.parse of the whole header reports it
  }
}

/** The text with each span replaced by `0`: a valid value wherever the span was one. */
function cutOut(text: string, cuts: readonly DataSpan[]): string {
  if (cuts.length === 0) return text;
  let out = "";
  let at = 0;
  for (const { start, end } of cuts) {
    out += `${text.slice(at, start)}0`;
    at = end;
  }
  return out + text.slice(at);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDelimiter(c: number): boolean {
  return c === 0x2c || c === 0x5d || c === 0x7d || c === 0x3a || isSpace(c) || c === 0x22 || c === 0x5b || c === 0x7b;
}
