import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // End-to-end tests start real servers and load real models; none of them sleeps.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
