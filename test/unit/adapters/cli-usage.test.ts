import { describe, expect, it } from "vitest";
import { LIMIT_OPTIONS, SERVE_OPTIONS } from "../../../adapters/cli-flags.ts";
import { commandHelp, quickAnswer } from "../../../adapters/cli-usage.mjs";

describe("the CLI's help", () => {
  it("describes every flag serve and check accept, and no flag they do not", () => {
    const flagsIn = (text: string) => new Set([...text.matchAll(/--([a-z][a-z-]+)/g)].map((m) => m[1]));
    const serve = flagsIn(commandHelp("serve"));
    expect([...serve].sort()).toEqual(Object.keys(SERVE_OPTIONS).sort());
    const check = flagsIn(commandHelp("check"));
    for (const flag of check) expect(Object.keys(LIMIT_OPTIONS).concat("no-models", "help")).toContain(flag);
  });

  it("leaves to the command what it must run, and bench's help to bench", () => {
    expect(quickAnswer(["serve", "--port", "0"], "1")).toBeUndefined();
    expect(quickAnswer(["bench", "--help"], "1")).toBeUndefined();
    expect(quickAnswer(["help", "bench"], "1")).toBeUndefined();
    expect(quickAnswer(["help", "nope"], "1")).toMatchObject({ code: 2, toStderr: true });
  });
});
