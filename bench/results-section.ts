import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const RESULTS_PATH = join(resolve(dirname(fileURLToPath(import.meta.url))), "RESULTS.md");

/**
 * Puts `section` into RESULTS.md text between `<!-- name:begin -->` and `<!-- name:end -->`,
 * leaving the other benchmarks' sections alone; a new section is appended.
 */
export function replaceSection(existing: string | undefined, name: string, section: string): string {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${begin}\n${section.trimEnd()}\n${end}\n`;
  const text = existing ?? "# Benchmark results\n";
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  if (i >= 0 && j > i) return text.slice(0, i) + block + text.slice(j + end.length).replace(/^\n/, "");
  return `${text.trimEnd()}\n\n${block}`;
}

/** Rewrites one named section of bench/RESULTS.md. */
export function writeResultsSection(name: string, section: string): void {
  writeFileSync(RESULTS_PATH, replaceSection(existsSync(RESULTS_PATH) ? readFileSync(RESULTS_PATH, "utf8") : undefined, name, section));
}
