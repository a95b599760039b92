import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { requireTool } from "../support/require-tool.ts";

// No server here: it runs once, not again under Bun and Deno (vitest.config.ts lists it).
describe("the shipped Prometheus alert rules", () => {
  it("pass `promtool check rules`", () => {
    requireTool("promtool");
    const check = spawnSync("promtool", ["check", "rules", "deploy/prometheus/alerts.yml"], { encoding: "utf8" });
    expect(check.stdout).toMatch(/SUCCESS: 8 rules found/);
    expect(check.status).toBe(0);
  });

  it("fire on the series that should raise them, and only those (`promtool test rules`)", () => {
    requireTool("promtool");
    const test = spawnSync("promtool", ["test", "rules", "deploy/prometheus/alerts.test.yml"], { encoding: "utf8" });
    expect(`${test.stdout}${test.stderr}`).toMatch(/SUCCESS/);
    expect(test.status).toBe(0);
  });
});
