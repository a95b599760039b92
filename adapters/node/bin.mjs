#!/usr/bin/env node
// `npx tensorfn …`: the CLI from tensorfn's sources compiled ahead (compiled-sources.mjs), or,
// where they cannot be, from the TypeScript sources as they are through module loader hooks.
import { compiledSources } from "./compiled-sources.mjs";

const args = process.argv.slice(2);
const compiled = await compiledSources();
// A compiled CLI that fails to load (its files damaged since) is no reason not to start.
const cli = compiled && (await import(compiled.cli).catch(() => undefined));
// A handler's stack names its TypeScript lines (its bundle's inline map). Enabled after the CLI
// loaded: Node parses the map of every module loaded later, and the CLI's cost 15 MB of memory.
process.setSourceMapsEnabled(true);
if (cli) {
  await cli.runCli(cli.nodeHost(args, compiled));
} else {
  const { registerTypeScript } = await import("./register-typescript.mjs");
  registerTypeScript();
  const { runCli } = await import("../cli.ts");
  const { nodeHost } = await import("./cli.ts");
  await runCli(nodeHost(args));
}
