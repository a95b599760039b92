/**
 * A number from a client's JSON as an error message quotes it. JSON.parse reads an integer past
 * 2^53 rounded (9007199254740993 becomes …992): echoing it would show a value the client never
 * sent, so such a number is described, not quoted.
 */
export function shownNumber(n: number): string {
  return Number.isInteger(n) && !Number.isSafeInteger(n) ? "a number past 2^53 (too large to be read exactly)" : String(n);
}

/** `JSON.stringify(value)`, with numbers as `shownNumber` gives them (arrays and objects one level deep). */
export function shownJson(value: unknown): string {
  if (typeof value === "number") return shownNumber(value);
  if (Array.isArray(value) && value.some((v) => typeof v === "number" && !Number.isSafeInteger(v) && Number.isInteger(v))) return `[${value.map((v) => (typeof v === "number" ? shownNumber(v) : JSON.stringify(v))).join(",")}]`;
  return JSON.stringify(value);
}
