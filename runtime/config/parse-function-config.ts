import { type Document, isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import type { DeclaredConfig } from "./declared-config.ts";
import { type ConfigIssue, fieldPath } from "./config-issue.ts";
import { functionSchema } from "./function-schema.ts";
import { toDeclared } from "./_to-declared.ts";
import { describeIssues, type PathProblem } from "./_describe-issues.ts";
import { type LoadLimits, limitProblems } from "./load-limits.ts";

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
 * `options.name` is the function's folder name; a `name` field, if given, must equal it. With
 * `options.limits`, values over the server's ceilings are issues too (as a load would refuse them).
 */
export function parseFunctionConfig(text: string, options: { file: string; name: string; limits?: LoadLimits }): ParseResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const issue = (line: number, field: string, problem: string): ConfigIssue => ({ file: options.file, line, field, problem });
  if (doc.errors.length > 0) {
    return {
      errors: doc.errors.map((e) => issue(lineCounter.linePos(e.pos[0]).line, "", `invalid YAML: ${e.message}`)),
    };
  }
  let input: unknown;
  try {
    input = doc.toJS() ?? {};
  } catch (cause) {
    return { errors: [issue(1, "", `invalid YAML: ${(cause as Error).message}`)] };
  }
  const locate = (p: PathProblem) => issue(lineOf(doc, lineCounter, p.path), fieldPath(p.path), p.problem);

  const schema = functionSchema("yaml");
  const result = schema.safeParse(input);
  const problems = result.success ? [] : describeIssues(result.error.issues, input, schema);
  const declaredName = (input as { name?: unknown } | null)?.name;
  if (typeof declaredName === "string" && declaredName !== options.name) {
    problems.push({ path: ["name"], problem: `'${declaredName}' does not match the folder name '${options.name}'; rename one or remove name` });
  }
  if (!result.success || problems.length > 0) {
    return { errors: problems.map(locate).sort((a, b) => a.line - b.line) };
  }
  const config = toDeclared(result.data, options.name);
  const over = options.limits ? limitProblems(config, options.limits) : [];
  if (over.length > 0) return { errors: over.map(locate).sort((a, b) => a.line - b.line) };
  return { config, errors: [] };
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
