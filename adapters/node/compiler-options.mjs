// What of tsconfig.json's compilerOptions changes the emitted code (class fields, import elision):
// the one definition both ways of compiling tensorfn's TypeScript for Node use (typescript-hooks.mjs,
// compiled-sources.mjs). A test keeps them equal to tsconfig.json's.
export const COMPILER_OPTIONS = { target: "ES2022", verbatimModuleSyntax: true };
