import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { requireTool } from "../support/require-tool.ts";

// No server here: it runs once, not again under Bun and Deno (vitest.config.ts lists it).
describe("the shipped Prometheus alert rules", () => {
  it("pass `promtool check rules`", () => {
    requireTool("promtool");
    const check = spawnSync("promtool", ["check", "rules", "deploy/prometheus/alerts.yml"], { encoding: "utf8" });
    expect(check.stdout).toMatch(/SUCCESS: 3 rules found/);
    expect(check.status).toBe(0);
  });
});
