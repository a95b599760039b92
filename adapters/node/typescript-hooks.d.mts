// Types for typescript-hooks.mjs (a module.register load hook, so plain JavaScript).
export interface LoadResult {
  format: string;
  source?: string;
  shortCircuit?: boolean;
}
export function load(url: string, context: object, next: (url: string, context: object) => Promise<LoadResult>): Promise<LoadResult>;
export const COMPILER_OPTIONS: { target: string; verbatimModuleSyntax: boolean };
