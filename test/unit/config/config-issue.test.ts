import { describe, expect, it } from "vitest";
import { formatIssue } from "../../../runtime/config/mod.ts";

describe("`formatIssue()`", () => {
  it("prints <file>:<line>: <field>: <problem>", () => {
    expect(formatIssue({ file: "functions/simple/function.yaml", line: 3, field: "input[0].data_type", problem: "bad" })).toBe(
      "functions/simple/function.yaml:3: input[0].data_type: bad",
    );
  });

  it("leaves the field out when the issue is about the whole file", () => {
    expect(formatIssue({ file: "f.yaml", line: 2, field: "", problem: "invalid YAML: x" })).toBe("f.yaml:2: invalid YAML: x");
  });
});
