#!/usr/bin/env node
// `npx tensorfn …`: registers TypeScript support so the sources run as they are, then starts the CLI.
import { registerTypeScript } from "./register-typescript.mjs";
registerTypeScript();
const { runCli } = await import("../cli.ts");
const { nodeHost } = await import("./cli.ts");
await runCli(nodeHost(process.argv.slice(2)));
