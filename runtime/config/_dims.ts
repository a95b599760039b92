/** `[-1,16]`, the form config errors quote dims and shapes in. */
export function formatDims(dims: readonly number[]): string {
  return `[${dims.join(",")}]`;
}

export function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** Element count of a shape, or undefined when a dimension is variable (-1). */
export function knownElementCount(dims: readonly number[]): number | undefined {
  let n = 1;
  for (const d of dims) {
    if (d < 0) return undefined;
    n *= d;
  }
  return n;
}
