// Runs a function process (isolation: process) under Node, Bun or Deno: the entry that serves the
// function over the IPC channel the server forked it with — compiled ahead when the server gave its
// URL (Node from bin.mjs), else the sources, with TypeScript support as bin.mjs registers it (Bun and
// Deno run TypeScript themselves).
const compiled = process.argv[2];
if (compiled) await import(compiled);
else {
  if (!process.versions.bun && !("Deno" in globalThis)) {
    const { registerTypeScript } = await import("./register-typescript.mjs");
    registerTypeScript();
  }
  await import("../function-process-entry.ts");
}
