import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describePage, RESULTS_DIR, RESULTS_INDEX, renderResultsIndex } from "../../../bench/suites/results-section.ts";

const pages = readdirSync(RESULTS_DIR)
  .filter((f) => f.endsWith(".md"))
  .sort()
  .map((f) => ({ name: f.slice(0, -3), text: readFileSync(join(RESULTS_DIR, f), "utf8") }));

describe("bench results", () => {
  it("bench/RESULTS.md is the index generated from bench/results/, as committed", () => {
    expect(pages.length).toBeGreaterThan(5);
    expect(readFileSync(RESULTS_INDEX, "utf8")).toBe(renderResultsIndex(pages));
  });

  it("every page names a title and the command that reproduces it", () => {
    const missing = pages.filter(({ text }) => {
      const { title, command } = describePage(text);
      return title === "(untitled)" || command === "";
    });
    expect(missing.map((p) => p.name)).toEqual([]);
  });

  it("reads a page's title, command and date", () => {
    const page = "## Cache\n\nReproduce:\n\n```sh\nnpm run bench:cache\n```\n\n- Date: 2026-12-02T10:00:00.000Z (12 s)\n";
    expect(describePage(page)).toEqual({ title: "Cache", command: "npm run bench:cache", ran: "2026-12-02" });
  });
});
