#!/usr/bin/env node
// `npx tensorfn …`: registers tsx so the TypeScript sources run as they are, then starts the CLI.
import { register } from "tsx/esm/api";
register();
const { runCli } = await import("../cli.ts");
const { nodeHost } = await import("./cli.ts");
await runCli(nodeHost(process.argv.slice(2)));
