/**
 * "Did you mean …?" for config errors: the nearest valid name by edit distance, after a few cheap
 * normalisations (case, `-` vs `_`, a missing enum prefix) and an alias table for common mistakes.
 */

/** Common wrong spellings of Triton data types, keyed by the bare upper-case name (no `TYPE_`). */
const DATA_TYPE_ALIASES: Record<string, string> = {
  FLOAT: "TYPE_FP32",
  FLOAT32: "TYPE_FP32",
  FLOAT16: "TYPE_FP16",
  HALF: "TYPE_FP16",
  DOUBLE: "TYPE_FP64",
  FLOAT64: "TYPE_FP64",
  BFLOAT16: "TYPE_BF16",
  INT: "TYPE_INT32",
  LONG: "TYPE_INT64",
  UINT: "TYPE_UINT32",
  BOOLEAN: "TYPE_BOOL",
  BYTES: "TYPE_STRING",
  STR: "TYPE_STRING",
};

/** Other enums' common mistakes. */
const VALUE_ALIASES: Record<string, string> = { gpu: "cuda", trt: "tensorrt", GPU: "KIND_GPU" };

/** Optimal-string-alignment (restricted Damerau-Levenshtein) distance. */
export function editDistance(a: string, b: string): number {
  const width = b.length + 1;
  const d = new Array<number>((a.length + 1) * width).fill(0);
  const at = (i: number, j: number) => d[i * width + j]!;
  for (let i = 0; i <= a.length; i++) d[i * width] = i;
  for (let j = 0; j <= b.length; j++) d[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      d[i * width + j] = v;
    }
  }
  return at(a.length, b.length);
}

function squash(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]/g, "");
}

/**
 * The candidate the user most likely meant by `word`, or undefined when none is reasonably close:
 * equal after squashing case and separators, a listed alias, the word with the candidates' common
 * prefix added (`CPU` → `KIND_CPU`), an edit distance of at most a third of the word's length,
 * or a name that contains the word (`batch_size` → `max_batch_size`).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const squashed = squash(word);
  const exact = candidates.find((c) => squash(c) === squashed);
  if (exact !== undefined) return exact;
  const aliased = aliasFor(word, candidates);
  if (aliased !== undefined) return aliased;
  const prefix = commonPrefix(candidates);
  if (prefix) {
    const prefixed = candidates.find((c) => squash(c) === squash(prefix + word));
    if (prefixed !== undefined) return prefixed;
  }
  let best: string | undefined;
  let bestDistance = Math.floor(word.length / 3);
  for (const c of candidates) {
    const distance = editDistance(squashed, squash(c));
    if (distance <= bestDistance && (best === undefined || distance < bestDistance)) {
      best = c;
      bestDistance = distance;
    }
  }
  if (best !== undefined) return best;
  if (squashed.length >= 4) return candidates.find((c) => squash(c).includes(squashed));
  return undefined;
}

function aliasFor(word: string, candidates: readonly string[]): string | undefined {
  const bare = word.toUpperCase().replace(/^TYPE_/, "");
  const found = [DATA_TYPE_ALIASES[bare], VALUE_ALIASES[word]];
  return found.find((a) => a !== undefined && candidates.includes(a));
}

/** The shared `XXX_` prefix of enum values such as `TYPE_…` or `KIND_…`, or "". */
function commonPrefix(candidates: readonly string[]): string {
  const first = candidates[0];
  if (first === undefined || candidates.length < 2) return "";
  const underscore = first.indexOf("_");
  if (underscore <= 0) return "";
  const prefix = first.slice(0, underscore + 1);
  return candidates.every((c) => c.startsWith(prefix)) ? prefix : "";
}

/** `; did you mean 'x'?` when a candidate is close, else ` (valid: a, b, c)`. */
export function suggestion(word: string, candidates: readonly string[], quote = true): string {
  const near = closest(word, candidates);
  if (near !== undefined) return `; did you mean ${quote ? `'${near}'` : near}?`;
  return ` (valid: ${candidates.map((c) => (quote ? `'${c}'` : c)).join(", ")})`;
}
