// Runs a function process (isolation: process) under Node, Bun or Deno: TypeScript support as
// bin.mjs registers it (Bun and Deno run TypeScript themselves), then the entry that serves the
// function over the IPC channel the server forked it with.
if (!process.versions.bun && !("Deno" in globalThis)) {
  const { registerTypeScript } = await import("./register-typescript.mjs");
  registerTypeScript();
}
await import("../function-process-entry.ts");
