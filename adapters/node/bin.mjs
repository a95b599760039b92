#!/usr/bin/env node
// `npx tensorfn …`: the CLI from tensorfn's sources compiled ahead (compiled-sources.mjs), or,
// where they cannot be, from the TypeScript sources as they are through module loader hooks.
import { readFileSync } from "node:fs";
import { quickAnswer } from "../cli-usage.mjs";

const args = process.argv.slice(2);
// Help, version and a mistyped command cost no more than Node's own start: nothing else is loaded.
const quick = quickAnswer(args, JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version);
if (quick) {
  (quick.toStderr ? process.stderr : process.stdout).write(`${quick.text}\n`);
  process.exit(quick.code);
}
const { compiledSources } = await import("./compiled-sources.mjs");
const compiled = await compiledSources();
// Compiled once ahead where the start cannot write (a read-only install: the image's install step
// does it); otherwise every start is ~0.8 s slower, which a scale-from-zero pays. Said, not silent.
if (!compiled) process.stderr.write("tensorfn: its sources could not be compiled ahead (is node_modules/.cache writable?); running from the TypeScript sources, which starts ~0.8 s slower. Compile once, as a user who can write there: node node_modules/tensorfn/adapters/node/compiled-sources.mjs\n");
// A compiled CLI that fails to load (its files damaged since) is no reason not to start, but it
// costs every start ~0.8 s more: say so, once, rather than run slower in silence.
const cli =
  compiled &&
  (await import(compiled.cli).catch((error) => {
    process.stderr.write(`tensorfn: the compiled CLI did not load (${error?.message ?? error}); running from the TypeScript sources, which starts slower\n`);
    return undefined;
  }));
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
