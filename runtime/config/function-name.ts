/**
 * The one rule for function names and version numbers, used by the scanner, the repository API,
 * `tensorfn check` and anything that prints a name (the dashboard). Names follow Triton's
 * repository layout rules, tightened so a name is safe in a path, a URL, a log line and HTML.
 */

/** Longest function name accepted (Triton sets none; 128 keeps names readable and keys short). */
export const MAX_FUNCTION_NAME_LENGTH = 128;

/** Largest version number: an int32, as most tools reading Triton's int64 versions assume. */
export const MAX_VERSION = 2 ** 31 - 1;

/** The documented rule, quoted in every error about a name. */
export const FUNCTION_NAME_RULE = `function names use only A-Z, a-z, 0-9, '_', '.' and '-', do not start with '.', and are at most ${MAX_FUNCTION_NAME_LENGTH} characters`;

const NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/** Why `name` is not a valid function name, or undefined when it is. */
export function functionNameProblem(name: string): string | undefined {
  if (name.length === 0) return `the name is empty; ${FUNCTION_NAME_RULE}`;
  if (name.length > MAX_FUNCTION_NAME_LENGTH) return `the name is ${name.length} characters long; ${FUNCTION_NAME_RULE}`;
  if (!NAME.test(name)) return `${quoteName(name)} is not a valid name; ${FUNCTION_NAME_RULE}`;
  return undefined;
}

/**
 * A name as a JSON string literal, shortened: control characters, quotes and ANSI escapes come
 * out escaped, so an invalid name cannot forge a log line or recolour a terminal.
 */
export function quoteName(name: string): string {
  const short = name.length > MAX_FUNCTION_NAME_LENGTH ? `${name.slice(0, MAX_FUNCTION_NAME_LENGTH)}…` : name;
  return JSON.stringify(short);
}

/**
 * A version folder's number: undefined for names that are not versions (non-numeric, 0-prefixed,
 * as Triton ignores them), "too-large" for numbers above MAX_VERSION.
 */
export function parseVersion(text: string): number | "too-large" | undefined {
  if (!/^[1-9][0-9]*$/.test(text)) return undefined;
  const n = Number(text);
  return text.length > 10 || n > MAX_VERSION ? "too-large" : n;
}
