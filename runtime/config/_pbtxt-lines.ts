import type { DescField, DescMessage } from "@bufbuild/protobuf";

/**
 * Where each field of a config.pbtxt sits: @bufbuild/protobuf parses the text format but reports
 * no positions, so this walks the same text once more, guided by the schema, and records the line
 * of every field by its path (`["input", 0, "dims"]`, map entries by key:
 * `["parameters", "execution_thread"]`). It only locates; the text was already parsed.
 */
export function pbtxtLines(text: string, schema: DescMessage): (path: readonly PropertyKey[]) => number {
  const lines = new Map<string, number>();
  try {
    new Walk(tokens(text), lines).message(schema, []);
  } catch {
    // A text the parser accepted walks to its end; anything else keeps what was found so far.
  }
  return (path) => {
    for (let n = path.length; n > 0; n--) {
      const line = lines.get(key(path.slice(0, n)));
      if (line !== undefined) return line;
    }
    return 1;
  };
}

/**
 * The line a text-format parser stopped at with `message`: the parser reports no position, so the
 * text is parsed again cut after a line, in a binary search (~log2(lines) parses, on the error path
 * only). A cut before the fault parses or ends in an "end of input" error; a cut after it stops at
 * the same token with the same message, since the parser reads left to right.
 */
export function faultLine(text: string, message: string, parse: (text: string) => void): number {
  const lines = text.split("\n");
  const faults = (count: number) => {
    try {
      // With its newline: a string the line leaves open fails as in the whole text, not at the cut.
      parse(`${lines.slice(0, count).join("\n")}\n`);
      return false;
    } catch (error) {
      return (error as Error).message === message;
    }
  };
  let low = 1;
  let high = lines.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (faults(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** The tokens on one line (not in a comment). */
export function tokensOfLine(text: string, line: number): Set<string> {
  return new Set([...tokens(text)].filter((t) => t.line === line).map((t) => t.text));
}

/** The innermost bracket (`{`, `[`, `<`) left open at the end of the text, where the text ends too soon. */
export function unclosedBracket(text: string): Token | undefined {
  const open: Token[] = [];
  const closes: Record<string, string> = { "}": "{", "]": "[", ">": "<" };
  for (const t of tokens(text)) {
    if (t.text === "{" || t.text === "[" || t.text === "<") open.push(t);
    else if (t.text in closes && open.at(-1)?.text === closes[t.text]) open.pop();
  }
  return open.at(-1);
}

interface Token {
  text: string;
  line: number;
}

function* tokens(text: string): Generator<Token> {
  const pattern = /#[^\n]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[A-Za-z_][\w.]*|-?[0-9][\w.+-]*|\n|[{}[\]<>:,;-]|\S/g;
  let line = 1;
  for (const match of text.matchAll(pattern)) {
    const t = match[0];
    if (t === "\n") line++;
    else if (!t.startsWith("#")) yield { text: t, line };
  }
}

const key = (path: readonly PropertyKey[]) => path.map(String).join("\u0000");

class Walk {
  readonly #tokens: Iterator<Token>;
  readonly #lines: Map<string, number>;
  #peeked: Token | undefined;

  constructor(tokens: Iterator<Token>, lines: Map<string, number>) {
    this.#tokens = tokens;
    this.#lines = lines;
  }

  #peek(): Token | undefined {
    if (!this.#peeked) {
      const next = this.#tokens.next();
      this.#peeked = next.done ? undefined : next.value;
    }
    return this.#peeked;
  }

  #next(): Token | undefined {
    const t = this.#peek();
    this.#peeked = undefined;
    return t;
  }

  #mark(path: readonly PropertyKey[], line: number): void {
    const k = key(path);
    if (!this.#lines.has(k)) this.#lines.set(k, line);
  }

  /** A message's fields, up to its closing brace (or the end of the text). */
  message(desc: DescMessage | undefined, path: PropertyKey[]): void {
    const counts = new Map<string, number>();
    for (let t = this.#peek(); t && t.text !== "}" && t.text !== ">"; t = this.#peek()) {
      const name = this.#next()!;
      const field = desc?.fields.find((f) => f.name === name.text);
      this.#mark([...path, name.text], name.line);
      if (this.#peek()?.text === ":") this.#next();
      // Each value as it is read: a message's fields are walked before the next value.
      const take = (v: { line: number; open: boolean }) => {
        if (field?.fieldKind === "list") {
          const index = counts.get(name.text) ?? 0;
          counts.set(name.text, index + 1);
          this.#mark([...path, name.text, index], v.line);
          if (v.open) {
            this.message(field.listKind === "message" ? field.message : undefined, [...path, name.text, index]);
            this.#close();
          }
        } else if (field?.fieldKind === "map") {
          if (v.open) this.#mapEntry(field, [...path, name.text]);
        } else if (v.open) {
          this.message(field?.fieldKind === "message" ? field.message : undefined, [...path, name.text]);
          this.#close();
        }
      };
      if (this.#peek()?.text === "[") {
        this.#next();
        for (let item = this.#peek(); item && item.text !== "]"; item = this.#peek()) {
          if (item.text === ",") this.#next();
          else take(this.#value());
        }
        this.#next(); // ]
      } else {
        take(this.#value());
      }
      if (this.#peek()?.text === "," || this.#peek()?.text === ";") this.#next();
    }
  }

  /** `key: k value { … }` (either order), recorded under the entry's key. */
  #mapEntry(field: DescField & { fieldKind: "map" }, path: PropertyKey[]): void {
    let entryKey: string | undefined;
    let line = 0;
    for (let t = this.#peek(); t && t.text !== "}" && t.text !== ">"; t = this.#peek()) {
      const name = this.#next()!;
      if (this.#peek()?.text === ":") this.#next();
      if (name.text === "key") {
        const k = this.#next()!;
        entryKey = k.text.replace(/^["']|["']$/g, "");
        line = k.line;
        this.#mark([...path, entryKey], line);
      } else {
        const v = this.#value();
        const at = entryKey === undefined ? path : [...path, entryKey];
        if (entryKey === undefined) this.#mark(path, v.line);
        if (v.open) {
          this.message(field.mapKind === "message" ? field.message : undefined, at);
          this.#close();
        }
      }
      if (this.#peek()?.text === "," || this.#peek()?.text === ";") this.#next();
    }
    this.#close();
  }

  /** One value: a scalar (consumed), or an opening brace (consumed; the caller reads the message). */
  #value(): { line: number; open: boolean } {
    const t = this.#next();
    if (!t) return { line: 0, open: false };
    if (t.text === "{" || t.text === "<") return { line: t.line, open: true };
    if (t.text === "-") this.#next();
    return { line: t.line, open: false };
  }

  #close(): void {
    if (this.#peek()?.text === "}" || this.#peek()?.text === ">") this.#next();
  }
}
