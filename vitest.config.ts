import { configDefaults, defineConfig } from "vitest/config";

/**
 * End-to-end files that never start a server under Bun or Deno: they drive the Node CLI, a client
 * (the bench command), a tool on a shipped file, or need the server in this process (a fake clock,
 * a controlled backend). `npm run test:bun` / `test:deno` (TENSORFN_RUNTIME=bun|deno) leave them
 * out, so the Node run counts them once. Every other file under test/e2e and test/browser runs
 * under each runtime by default: a new file is picked up unless it is listed here.
 */
export const NODE_ONLY = [
  "test/e2e/cli.test.ts",
  "test/e2e/bench-command.test.ts",
  "test/e2e/prometheus-rules.test.ts",
  "test/e2e/load-timeout.test.ts",
  "test/e2e/autoscale.test.ts",
  "test/e2e/park-rss.test.ts",
  "test/e2e/router.test.ts",
  "test/e2e/production-install.test.ts",
  "test/e2e/package-install.test.ts",
  "test/e2e/readme-tour.test.ts",
];

const otherRuntime = process.env.TENSORFN_RUNTIME === "bun" || process.env.TENSORFN_RUNTIME === "deno";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: otherRuntime ? [...configDefaults.exclude, ...NODE_ONLY] : configDefaults.exclude,
    // End-to-end tests start real servers and load real models; none of them sleeps.
    testTimeout: 60_000,
    setupFiles: ["test/support/client-keep-alive.ts"],
    globalSetup: ["test/support/temp-root.ts"],
    hookTimeout: 60_000,
  },
});
