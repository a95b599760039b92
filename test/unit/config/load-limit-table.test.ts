import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { defaultLoadLimits, LIMIT_FLAGS } from "../../../runtime/config/mod.ts";
import { LOAD_LIMIT_TABLE, shownDefault } from "../../../runtime/config/load-limit-table.mjs";
import { LIMIT_OPTIONS } from "../../../adapters/cli-flags.ts";
import { commandHelp } from "../../../adapters/cli-usage.mjs";

// The load ceilings are one table (runtime/config/load-limit-table.mjs): the runtime's defaults and
// flag names, the CLI's options and help, and the security guide's table all say what it says.

describe("the load ceilings' table", () => {
  it("gives the runtime its defaults and flags, and the CLI its options", () => {
    expect(defaultLoadLimits(2)).toMatchObject({ instances: 64, threads: 8, warmupElements: 16 * 2 ** 20, uploadTotalBytes: 2 ** 30 });
    expect(defaultLoadLimits(1).threads).toBe(4);
    expect(Object.keys(defaultLoadLimits(2)).sort()).toEqual(Object.keys(LIMIT_FLAGS).sort());
    expect(Object.keys(LIMIT_OPTIONS).map((f) => `--${f}`).sort()).toEqual(Object.values(LIMIT_FLAGS).sort());
  });

  it("is what serve --help and docs/guides/security.md show, flag by flag", () => {
    const help = commandHelp("serve");
    const guide = readFileSync(new URL("../../../docs/guides/security.md", import.meta.url), "utf8");
    for (const row of LOAD_LIMIT_TABLE) {
      expect(help).toContain(`${row.flag} ${shownDefault(row)}`);
      const shown = row.perCore ? `cores × ${row.perCore}` : shownDefault(row);
      expect(guide, row.flag).toContain(`| \`${row.flag}\` | ${shown} |`);
    }
  });
});
