import { describe, expect, it } from "vitest";
import { cpSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkRepository, formatIssue } from "../../../runtime/config/mod.ts";
import { createNodePlatform } from "../../../adapters/node/platform.ts";
import { FUNCTIONS } from "../../../harness/repositories.ts";

// Every example function folder works when copied alone into another repository: its config,
// its model and its handler — compiled with whatever it imports — need nothing outside it. An
// ensemble is the exception by definition: it needs its steps beside it.
describe("example function folders", () => {
  const platform = createNodePlatform();
  const names = readdirSync(FUNCTIONS).filter((name) => !/ensemble_scheduling/.test(readFileSync(join(FUNCTIONS, name, "function.yaml"), "utf8")));

  it("finds the examples it checks, ensembles left out", () => {
    expect(names).toEqual(expect.arrayContaining(["ocr", "ocr_prepare", "ocr_boxes", "ocr_lines", "ocr_decode", "word_count", "simple"]));
    expect(names).not.toContain("ocr_ensemble");
  });

  it("each passes `tensorfn check` alone in a repository of its own", async () => {
    const problems: string[] = [];
    for (const name of names) {
      const repo = mkdtempSync(join(tmpdir(), "tensorfn-alone-"));
      cpSync(join(FUNCTIONS, name), join(repo, name), { recursive: true });
      const issues = await checkRepository(platform, repo, { checkModule: platform.checkModule });
      problems.push(...issues.map((issue) => formatIssue({ ...issue, file: issue.file.slice(repo.length + 1) })));
    }
    expect(problems).toEqual([]);
  });
});
