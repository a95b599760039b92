// Each suite's results are one generated page, bench/results/<name>.md, rewritten whole by the
// suite's run; bench/RESULTS.md is the one-screen index of those pages, rebuilt from them on every
// write. Lab notes and studies live in docs/notes/, never here.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const BENCH = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const RESULTS_DIR = join(BENCH, "results");
export const RESULTS_INDEX = join(BENCH, "RESULTS.md");

/** The page of suite `name`. */
export function resultsPagePath(name: string): string {
  return join(RESULTS_DIR, `${name}.md`);
}

/** Writes suite `name`'s page (its whole content) and rebuilds the index. */
export function writeResultsSection(name: string, page: string): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(resultsPagePath(name), `${page.trimEnd()}\n`);
  writeResultsIndex();
}

/** What the index says of one page: its title, the command that reproduces it, when it ran. */
export function describePage(page: string): { title: string; command: string; ran: string } {
  const title = /^#{1,3} (.+)$/m.exec(page)?.[1]?.trim() ?? "(untitled)";
  const command = /^```sh\n([^\n]+)/m.exec(page)?.[1]?.trim() ?? /`((?:npm run|npx tsx|bash) [^`]+)`/.exec(page)?.[1] ?? "";
  const ran = /^- Date: (\S+)/m.exec(page)?.[1]?.slice(0, 10) ?? /(20\d\d-\d\d-\d\d)(?!\d)/.exec(page)?.[1] ?? "";
  return { title, command, ran };
}

/** The index of every page under bench/results/, in name order. */
export function renderResultsIndex(pages: readonly { name: string; text: string }[]): string {
  const rows = pages.map(({ name, text }) => {
    const { title, command, ran } = describePage(text);
    return `| [${title}](results/${name}.md) | ${command ? `\`${command}\`` : ""} | ${ran} |`;
  });
  return [
    "# Benchmark results",
    "",
    "Generated: each suite rewrites its own page under `bench/results/` and this index with it",
    "(bench/suites/results-section.ts); do not edit either by hand. Every number on a page comes from",
    "the one run that page describes, reproduced by the command beside it. How to run and read them:",
    "[docs/guides/benchmarking.md](../docs/guides/benchmarking.md); studies and lab notes:",
    "[docs/notes/](../docs/notes/).",
    "",
    "| page | reproduce with | last run |",
    "|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

export function writeResultsIndex(): void {
  const pages = existsSync(RESULTS_DIR)
    ? readdirSync(RESULTS_DIR)
        .filter((f) => f.endsWith(".md"))
        .sort()
        .map((f) => ({ name: f.slice(0, -3), text: readFileSync(join(RESULTS_DIR, f), "utf8") }))
    : [];
  writeFileSync(RESULTS_INDEX, renderResultsIndex(pages));
}
