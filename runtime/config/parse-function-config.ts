import { type Document, isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import type { DeclaredConfig } from "./declared-config.ts";
import { type ConfigIssue, fieldPath } from "./config-issue.ts";
import { functionSchema } from "./function-schema.ts";
import { toDeclared } from "./_to-declared.ts";
import { describeIssues, type PathProblem } from "./_describe-issues.ts";
import { type LoadLimits, limitProblems } from "./load-limits.ts";

/**
 * What one function.yaml may hold, each bounded because its unbounded form was measured to freeze
 * a server: parsing costs ~50 µs a key here (256 KiB: ~0.4 s at worst), aliases can expand a small
 * file into gigabytes, and every problem found is text in an error someone reads.
 */
export const CONFIG_FILE_LIMITS = {
  /** Characters of the file. */
  chars: 256 * 1024,
  /** Bytes read of it at most: a larger file is not read at all; below it, `chars` decides (and says so). */
  bytes: 16 * 1024 * 1024,
  /** Values once aliases are expanded (map entries, list items, scalars): a 1024-step ensemble has ~20 000. */
  values: 100_000,
  /** Levels of nesting. */
  depth: 32,
  /** Problems reported; the rest are counted. */
  problems: 20,
  /** Characters of one problem's text (a key or value it quotes may be long). */
  problemChars: 400,
} as const;

/** The outcome of reading one function.yaml: a config when it is valid, else every issue found. */
export interface ParseResult {
  config?: DeclaredConfig;
  errors: ConfigIssue[];
}

/**
 * Reads a function.yaml: YAML syntax, then shape and defaults (the zod schema), then rules that
 * span fields. Every issue carries the 1-based line of the node at fault — for an unknown field its
 * key, for a missing one the object that lacks it, for a syntax error the line the YAML parser
 * names. An empty file is a valid config with every default.
 *
 * `options.name` is the function's folder name; a `name` field, if given, must equal it (unless
 * `anyName`: a folder not named for its function, as a model ModelMesh pulled). With
 * `options.limits`, values over the server's ceilings are issues too (as a load would refuse them).
 */
export function parseFunctionConfig(text: string, options: { file: string; name: string; limits?: LoadLimits; anyName?: boolean }): ParseResult {
  const issue = (line: number, field: string, problem: string): ConfigIssue => ({ file: options.file, line, field, problem: bounded(problem) });
  if (text.length > CONFIG_FILE_LIMITS.chars) {
    return { errors: [issue(1, "", `the file has ${text.length} characters; a function.yaml may have at most ${CONFIG_FILE_LIMITS.chars}`)] };
  }
  const lineCounter = new LineCounter();
  // Duplicate keys are found by shapeProblems in one pass: the parser's own check compares each key with every one before it.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length > 0) {
    return {
      errors: firstOf(
        doc.errors,
        (e) => issue(lineCounter.linePos(e.pos[0]).line, "", `invalid YAML: ${/call stack/i.test(e.message) ? `nests too deeply to read (at most ${CONFIG_FILE_LIMITS.depth} levels)` : e.message}`),
        options.file,
      ),
    };
  }
  const shape = shapeProblems(doc, lineCounter);
  if (shape.length > 0) return { errors: firstOf(shape, (p) => issue(p.line, p.field, p.problem), options.file) };
  let input: unknown;
  try {
    input = doc.toJS() ?? {};
  } catch (cause) {
    return { errors: [issue(1, "", `invalid YAML: ${(cause as Error).message}`)] };
  }
  const locate = (p: PathProblem) => issue(lineOf(doc, lineCounter, p.path), fieldPath(p.path), p.problem);

  const schema = functionSchema("yaml");
  const result = schema.safeParse(input);
  const problems = result.success ? [] : describeIssues(result.error.issues, input, schema, { described: CONFIG_FILE_LIMITS.problems });
  const declaredName = (input as { name?: unknown } | null)?.name;
  if (typeof declaredName === "string" && declaredName !== options.name && !options.anyName) {
    problems.push({ path: ["name"], problem: `'${declaredName}' does not match the folder name '${options.name}'; rename one or remove name` });
  }
  if (!result.success || problems.length > 0) {
    return { errors: firstOf(problems, locate, options.file) };
  }
  const config = toDeclared(result.data, options.name);
  const over = options.limits ? limitProblems(config, options.limits) : [];
  if (over.length > 0) return { errors: firstOf(over, locate, options.file) };
  return { config, errors: [] };
}

/** A problem cut at CONFIG_FILE_LIMITS.problemChars (function.yaml and config.pbtxt alike). */
export function bounded(problem: string): string {
  const max = CONFIG_FILE_LIMITS.problemChars;
  return problem.length > max ? `${problem.slice(0, max)}… (${problem.length - max} more characters)` : problem;
}

/**
 * The first problems, in line order, and one that counts the rest. `locate` runs only on those
 * listed (each is a walk from the root: 200 000 unknown keys must not cost 200 000 walks).
 */
function firstOf<T>(problems: readonly T[], locate: (p: T) => ConfigIssue, file: string): ConfigIssue[] {
  const shown = problems.slice(0, CONFIG_FILE_LIMITS.problems).map(locate).sort((a, b) => a.line - b.line);
  const more = problems.length - shown.length;
  return more > 0 ? [...shown, { file, line: shown.at(-1)!.line, field: "", problem: `and ${more} more problem(s) not listed` }] : shown;
}

/**
 * What the parser does not bound, in one pass over the document: nesting depth, duplicate keys
 * (each map's keys in a set), and the values the document holds once its aliases are expanded
 * (an alias counts what it points at: 99 aliases of a 200 000-item list are 20 million values,
 * from 400 kB of text). Each with the line of the node at fault; stops at the first over a limit.
 */
function shapeProblems(doc: Document, lineCounter: LineCounter): { line: number; field: string; problem: string }[] {
  const problems: { line: number; field: string; problem: string }[] = [];
  const lineOfNode = (node: unknown) => ((node as Node | null)?.range ? lineCounter.linePos((node as Node).range![0]).line : 1);
  const sizes = new Map<unknown, number>();
  const onPath = new Set<unknown>();
  const anchors = new Map<string, unknown>();
  let over = false;
  // The values under `node` (itself included), aliases expanded; memoised, so each node is walked once.
  const size = (node: unknown, depth: number): number => {
    if (over) return 0;
    if (depth > CONFIG_FILE_LIMITS.depth) {
      over = true;
      problems.push({ line: lineOfNode(node), field: "", problem: `nests deeper than ${CONFIG_FILE_LIMITS.depth} levels` });
      return 0;
    }
    if (isAlias(node)) {
      // The latest anchor of that name seen so far (the walk is in document order), as YAML resolves it; Alias.resolve walks the whole document each time.
      const target = anchors.get(node.source);
      if (onPath.has(target)) {
        over = true;
        problems.push({ line: lineOfNode(node), field: "", problem: `alias *${node.source} refers to a value that contains it` });
        return 0;
      }
      return target ? size(target, depth + 1) : 1;
    }
    const known = sizes.get(node);
    if (known !== undefined) return known;
    let n = 1;
    const anchor = (node as { anchor?: string } | null)?.anchor;
    if (anchor) anchors.set(anchor, node);
    onPath.add(node);
    if (isMap(node)) {
      const keys = new Set<string>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
        if (key !== undefined && keys.has(key)) problems.push({ line: lineOfNode(pair.key), field: key, problem: `duplicate key '${key}'` });
        if (key !== undefined) keys.add(key);
        n += size(pair.key, depth + 1) + size(pair.value, depth + 1);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) n += size(item, depth + 1);
    }
    onPath.delete(node);
    sizes.set(node, n);
    if (!over && n > CONFIG_FILE_LIMITS.values) {
      over = true;
      problems.push({ line: lineOfNode(node), field: "", problem: `holds more than ${CONFIG_FILE_LIMITS.values} values once its aliases are expanded` });
    }
    return n;
  };
  size(doc.contents, 0);
  return problems;
}

/** The 1-based line of `path` in a function.yaml's text (the deepest node on it that exists). */
export function lineOfPath(text: string, path: readonly PropertyKey[]): number {
  const lineCounter = new LineCounter();
  return lineOf(parseDocument(text, { lineCounter, prettyErrors: false }), lineCounter, path);
}

/**
 * The line of the deepest node on `path` that exists: a map entry counts at its key's line (so
 * an unknown or wrong field points at the key, a missing one at the object that lacks it), a list
 * item at its own line.
 */
function lineOf(doc: Document, lineCounter: LineCounter, path: readonly PropertyKey[]): number {
  const lineAt = (node: Node | null | undefined, fallback: number) =>
    node?.range ? lineCounter.linePos(node.range[0]).line : fallback;
  let node: unknown = doc.contents;
  let line = lineAt(doc.contents, 1);
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (!pair) break;
      line = lineAt(pair.key as Node, line);
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number" && segment < node.items.length) {
      node = node.items[segment];
      line = lineAt(node as Node, line);
    } else {
      break;
    }
  }
  return line;
}
