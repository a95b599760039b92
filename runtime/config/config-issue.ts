/** One problem found in a function's configuration, located well enough for an editor to jump to. */
export interface ConfigIssue {
  /** Path of the file (or folder) at fault, as the caller named it. */
  file: string;
  /** 1-based line of the offending node; 0 when the issue is about a folder, not a line. */
  line: number;
  /** 1-based column, where known (a handler's compile error). */
  column?: number;
  /** Dotted, indexed path of the field (`input[0].data_type`); "" for the file as a whole. */
  field: string;
  problem: string;
}

/** `<file>:<line>: <field>: <problem>`, the form editors and CI logs link to. */
export function formatIssue(issue: ConfigIssue): string {
  const field = issue.field ? `${issue.field}: ` : "";
  return `${issue.file}:${issue.line}${issue.column ? `:${issue.column}` : ""}: ${field}${issue.problem}`;
}

/** `["input", 0, "dims"]` → `input[0].dims`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out;
}
