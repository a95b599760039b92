/**
 * A JSON reader for text that `JSON.parse` has already accepted, which differs from it in one way:
 * an integer literal (no fraction, no exponent) outside ±(2^53 - 1) becomes a `bigint` holding its
 * exact digits instead of a rounded `number`. The request decoder calls it only on the slow path,
 * when an INT64/UINT64 input carries such a value; the text is known to be valid JSON, so this
 * reader only has to tokenize correctly, not diagnose. It is iterative, so nesting depth cannot
 * overflow the call stack.
 */
export function parseJsonLossless(text: string): unknown {
  const reader = new Reader(text);
  return reader.read();
}

type Container = { kind: "array"; value: unknown[] } | { kind: "object"; value: Record<string, unknown>; key: string };

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

class Reader {
  readonly #text: string;
  #i = 0;

  constructor(text: string) {
    this.#text = text;
  }

  read(): unknown {
    const stack: Container[] = [];
    for (;;) {
      // Read one value, or open a container and loop to read its first member.
      this.#skipSpace();
      const c = this.#text.charCodeAt(this.#i);
      let value: unknown;
      if (c === 0x5b /* [ */) {
        this.#i++;
        this.#skipSpace();
        if (this.#text.charCodeAt(this.#i) !== 0x5d /* ] */) {
          stack.push({ kind: "array", value: [] });
          continue;
        }
        this.#i++;
        value = [];
      } else if (c === 0x7b /* { */) {
        this.#i++;
        this.#skipSpace();
        if (this.#text.charCodeAt(this.#i) !== 0x7d /* } */) {
          stack.push({ kind: "object", value: {}, key: this.#key() });
          continue;
        }
        this.#i++;
        value = {};
      } else {
        value = this.#scalar(c);
      }
      // Store the value in its container; close every container that ends here.
      for (;;) {
        const top = stack.at(-1);
        if (top === undefined) return value;
        if (top.kind === "array") top.value.push(value);
        else setOwn(top.value, top.key, value);
        this.#skipSpace();
        const sep = this.#text.charCodeAt(this.#i++);
        if (sep === 0x2c /* , */) {
          if (top.kind === "object") top.key = this.#key();
          break;
        }
        if (sep !== 0x5d /* ] */ && sep !== 0x7d /* } */) throw this.#unexpected(this.#i - 1);
        stack.pop();
        value = top.value;
      }
    }
  }

  #key(): string {
    this.#skipSpace();
    if (this.#text.charCodeAt(this.#i) !== 0x22) throw this.#unexpected(this.#i);
    const key = this.#string();
    this.#skipSpace();
    if (this.#text.charCodeAt(this.#i++) !== 0x3a /* : */) throw this.#unexpected(this.#i - 1);
    return key;
  }

  #scalar(c: number): unknown {
    const text = this.#text;
    if (c === 0x22 /* " */) return this.#string();
    if (text.startsWith("true", this.#i)) return (this.#i += 4), true;
    if (text.startsWith("false", this.#i)) return (this.#i += 5), false;
    if (text.startsWith("null", this.#i)) return (this.#i += 4), null;
    NUMBER.lastIndex = this.#i;
    const m = NUMBER.exec(text);
    if (m === null) throw this.#unexpected(this.#i);
    this.#i += m[0].length;
    const n = Number(m[0]);
    if (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(n)) return BigInt(m[0]);
    return n;
  }

  #string(): string {
    const text = this.#text;
    const start = this.#i;
    let j = start + 1;
    let escaped = false;
    for (;;) {
      const c = text.charCodeAt(j);
      if (c === 0x22) break;
      if (c === 0x5c /* \ */) {
        escaped = true;
        j += 2;
      } else if (Number.isNaN(c)) {
        throw this.#unexpected(j);
      } else {
        j++;
      }
    }
    this.#i = j + 1;
    return escaped ? (JSON.parse(text.slice(start, j + 1)) as string) : text.slice(start + 1, j);
  }

  #skipSpace(): void {
    const text = this.#text;
    let c = text.charCodeAt(this.#i);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++this.#i);
  }

  #unexpected(at: number): Error {
    return new Error(`lossless JSON reader: unexpected input at offset ${at}`);
  }
}

/** Assign like JSON.parse does: `__proto__` becomes an own property, never the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
