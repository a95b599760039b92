import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { connectionsThatFit, openFileLimit, RESERVED_DESCRIPTORS } from "../../../adapters/descriptor-limit.ts";

describe("connectionsThatFit()", () => {
  it("keeps --max-connections where every port full at once leaves the reserve free, and lowers it where it would not", () => {
    expect(connectionsThatFit(8192, 2, 64, 1_048_576)).toBe(8192);
    // 1,024 descriptors, HTTP and gRPC: (1024 − 256) / 2 − 64 probes' room.
    expect(connectionsThatFit(8192, 2, 64, 1024)).toBe((1024 - RESERVED_DESCRIPTORS) / 2 - 64);
    expect(connectionsThatFit(8192, 1, 64, 1024)).toBe(1024 - RESERVED_DESCRIPTORS - 64);
    expect(connectionsThatFit(10, 2, 64, 1024)).toBe(10); // a smaller request stands
    expect(connectionsThatFit(8192, 2, 64, 300)).toBe(16); // never below 16
    expect(connectionsThatFit(8192, 2, 64, undefined)).toBe(8192); // unknown: as asked
  });

  it("reads this process's soft limit as `ulimit -n` gives it (Linux)", () => {
    const shell = spawnSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).stdout.trim();
    expect(openFileLimit()).toBe(shell === "unlimited" ? undefined : Number(shell));
  });
});
