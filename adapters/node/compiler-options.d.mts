/** See compiler-options.mjs. */
export const COMPILER_OPTIONS: { target: string; verbatimModuleSyntax: boolean };
