/**
 * Ours: an ensemble step's `condition`, a small expression over ensemble tensors and request
 * parameters, read without `eval`. Grammar:
 *
 *   or := and ("||" and)*        and := not ("&&" not)*       not := "!" not | cmp
 *   cmp := term (("==" | "!=" | "<" | "<=" | ">" | ">=") term)?
 *   term := number | 'text' | "text" | true | false | "(" or ")"
 *         | any(T) | all(T) | max(T) | min(T) | sum(T) | size(T) | first(T) | param('name') | T
 *
 * `T` names an ensemble tensor (a bare name reads its first element). `any`/`all`: some/every
 * element non-zero (non-empty for BYTES); `size`: element count; BYTES elements read as UTF-8 text.
 * `param('name')` is the request parameter (undefined when absent).
 */
import type { Tensor } from "../core/mod.ts";

export type Condition =
  | { kind: "literal"; value: Value }
  | { kind: "tensor"; fn: TensorFn; tensor: string }
  | { kind: "param"; name: string }
  | { kind: "not"; of: Condition }
  | { kind: "and" | "or"; left: Condition; right: Condition }
  | { kind: "cmp"; op: CmpOp; left: Condition; right: Condition };

export type Value = number | string | boolean | undefined;
type TensorFn = "any" | "all" | "max" | "min" | "sum" | "size" | "first";
type CmpOp = "==" | "!=" | "<" | "<=" | ">" | ">=";
const FNS = new Set<string>(["any", "all", "max", "min", "sum", "size", "first"]);
const TOKEN = /\s*(\|\||&&|==|!=|<=|>=|[()!<>,]|'[^']*'|"[^"]*"|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|[A-Za-z_][A-Za-z0-9_.-]*)/y;

/** Parses a condition; throws an Error saying where it stopped making sense. */
export function parseCondition(text: string): Condition {
  if (text.length > 1000) throw new Error("is longer than 1000 characters");
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) {
      if (/^\s*$/.test(text.slice(at))) break;
      throw new Error(`cannot read ${JSON.stringify(text.slice(at).trim().slice(0, 20))} (at character ${at + 1})`);
    }
    tokens.push(m[1]!);
  }
  let i = 0;
  const peek = () => tokens[i];
  /** The next token: exactly `expected` when given; `what` names what was wanted if the text ends. */
  const take = (expected?: string, what = expected) => {
    const t = tokens[i++];
    if (t === undefined) throw new Error(`ends too early${what ? `: expected ${what}` : ""}`);
    if (expected && t !== expected) throw new Error(`expected ${expected}, found ${t}`);
    return t;
  };
  let depth = 0;
  const or = (): Condition => {
    if (++depth > 64) throw new Error("nests deeper than 64");
    let left = and();
    while (peek() === "||") (take(), (left = { kind: "or", left, right: and() }));
    depth--;
    return left;
  };
  const and = (): Condition => {
    let left = not();
    while (peek() === "&&") (take(), (left = { kind: "and", left, right: not() }));
    return left;
  };
  const not = (): Condition => (peek() === "!" ? (take(), { kind: "not", of: not() }) : cmp());
  const cmp = (): Condition => {
    const left = term();
    const op = peek();
    if (op === "==" || op === "!=" || op === "<" || op === "<=" || op === ">" || op === ">=") {
      take();
      return { kind: "cmp", op, left, right: term() };
    }
    return left;
  };
  const term = (): Condition => {
    const t = take(undefined, "a value");
    if (t === "(") {
      const inner = or();
      take(")");
      return inner;
    }
    if (t === "true" || t === "false") return { kind: "literal", value: t === "true" };
    if (/^['"]/.test(t)) return { kind: "literal", value: t.slice(1, -1) };
    if (/^-?\d/.test(t)) return { kind: "literal", value: Number(t) };
    if (/^[A-Za-z_]/.test(t)) {
      if (peek() !== "(") return { kind: "tensor", fn: "first", tensor: t };
      take("(");
      const arg = take(undefined, "an argument");
      take(")");
      if (t === "param") {
        if (!/^['"]/.test(arg)) throw new Error(`param() takes a quoted name, as param('${arg}')`);
        return { kind: "param", name: arg.slice(1, -1) };
      }
      if (!FNS.has(t)) throw new Error(`'${t}' is not a function (any, all, max, min, sum, size, first, param)`);
      if (!/^[A-Za-z_]/.test(arg)) throw new Error(`${t}() takes a tensor name, not ${arg}`);
      return { kind: "tensor", fn: t as TensorFn, tensor: arg };
    }
    throw new Error(`unexpected ${t}`);
  };
  const condition = or();
  if (i < tokens.length) throw new Error(`unexpected ${tokens[i]} after a complete condition`);
  return condition;
}

/** The ensemble tensors a condition reads (its step waits for them). */
export function conditionTensors(c: Condition): string[] {
  switch (c.kind) {
    case "tensor":
      return [c.tensor];
    case "not":
      return conditionTensors(c.of);
    case "and":
    case "or":
    case "cmp":
      return [...conditionTensors(c.left), ...conditionTensors(c.right)];
    default:
      return [];
  }
}

/** What a condition reads: a tensor's reduction (`fn` over its elements) and request parameters. */
export interface ConditionInputs {
  tensor(name: string, fn: TensorFn): Value;
  param(name: string): Value;
}

export type { TensorFn };

/** Evaluates a condition (true to run the step). */
export function evaluateCondition(c: Condition, inputs: ConditionInputs): boolean {
  return truthy(value(c, inputs));
}

function value(c: Condition, inputs: ConditionInputs): Value {
  switch (c.kind) {
    case "literal":
      return c.value;
    case "param":
      return inputs.param(c.name);
    case "not":
      return !truthy(value(c.of, inputs));
    case "and":
      return truthy(value(c.left, inputs)) && truthy(value(c.right, inputs));
    case "or":
      return truthy(value(c.left, inputs)) || truthy(value(c.right, inputs));
    case "cmp":
      return compare(c.op, value(c.left, inputs), value(c.right, inputs));
    case "tensor":
      return inputs.tensor(c.tensor, c.fn);
  }
}

const utf8 = new TextDecoder();

/**
 * `fn` over a tensor's elements — numbers (64-bit ones rounded), BYTES elements as UTF-8 text (as
 * numbers for sum, max and min) — in one pass without copying the tensor: `first`, `size`, and
 * `any`/`all` once decided, read no more than they need.
 */
export function reduceTensor(tensor: Pick<Tensor, "data">, fn: TensorFn): Value {
  const data = tensor.data as ArrayLike<number | bigint> | Uint8Array[];
  const n = data.length;
  if (fn === "size") return n;
  const bytes = Array.isArray(data);
  if (fn === "first") return n === 0 ? undefined : bytes ? utf8.decode((data as Uint8Array[])[0]) : Number(data[0]);
  if (fn === "any" || fn === "all") {
    const wanted = fn === "any";
    for (let i = 0; i < n; i++) {
      const holds = bytes ? (data as Uint8Array[])[i]!.byteLength > 0 : truthy(Number(data[i]));
      if (holds === wanted) return wanted;
    }
    return !wanted;
  }
  if (n === 0) return fn === "sum" ? 0 : undefined;
  const at = bytes ? (i: number) => Number(utf8.decode((data as Uint8Array[])[i])) : (i: number) => Number(data[i]);
  let result = fn === "sum" ? 0 : at(0);
  for (let i = fn === "sum" ? 0 : 1; i < n; i++) {
    const x = at(i);
    if (fn === "sum") result += x;
    else if (Number.isNaN(x) || Number.isNaN(result)) result = NaN; // as Math.max/min
    else if (fn === "max" ? x > result : x < result) result = x;
  }
  return result;
}

function truthy(v: Value | number | string): boolean {
  return v !== undefined && v !== false && v !== 0 && v !== "" && !Number.isNaN(v);
}

function compare(op: CmpOp, a: Value, b: Value): boolean {
  if (op === "==") return a === b;
  if (op === "!=") return a !== b;
  if (typeof a !== typeof b || a === undefined || typeof a === "boolean") return false;
  const x = a as number | string;
  const y = b as number | string;
  return op === "<" ? x < y : op === "<=" ? x <= y : op === ">" ? x > y : x >= y;
}
