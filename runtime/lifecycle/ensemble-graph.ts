// The ensemble graph over registered configs, as pure functions: `stepsOf(name)` gives the
// functions an ensemble's steps run (none for other functions).

/** A path of ensemble steps from `name` back to itself, or undefined (loading it would wait for itself). */
export function includesItself(name: string, stepsOf: (name: string) => readonly string[]): string[] | undefined {
  const seen = new Set<string>();
  const walk = (current: string, path: string[]): string[] | undefined => {
    for (const step of stepsOf(current)) {
      if (step === name) return [...path, name];
      if (seen.has(step)) continue;
      seen.add(step);
      const found = walk(step, [...path, step]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(name, [name]);
}

/**
 * The functions `name`'s steps run (through nested ensembles) that none of `others` (the other
 * wanted functions) runs: what Triton's `unload_dependents` unloads with it. Only names `exists` knows.
 */
export function stepsOnlyOf(name: string, others: readonly string[], stepsOf: (name: string) => readonly string[], exists: (name: string) => boolean): string[] {
  const reach = (roots: readonly string[]) => {
    const seen = new Set<string>();
    const walk = (n: string) => stepsOf(n).forEach((m) => !seen.has(m) && (seen.add(m), walk(m)));
    roots.forEach(walk);
    return seen;
  };
  const mine = reach([name]);
  mine.delete(name);
  const kept = reach(others.filter((o) => o !== name && !mine.has(o)));
  return [...mine].filter((m) => !kept.has(m) && exists(m));
}
