import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

// `npm ci` in a clone on the oldest Node tensorfn supports warns of no package (EBADENGINE): every
// package the lockfile installs accepts the Node version package.json's engines start at.
const require = createRequire(import.meta.url);
const semver = require("semver") as { minVersion(range: string): { version: string } | null; satisfies(version: string, range: string): boolean };

describe("the lockfile's engines", () => {
  it("accept the oldest Node tensorfn supports", () => {
    const { engines } = JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } };
    const oldest = semver.minVersion(engines.node)!.version;
    const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as { packages: Record<string, { engines?: { node?: string } | string[] }> };
    const refusing = Object.entries(lock.packages)
      .filter(([path, p]) => path && !Array.isArray(p.engines) && p.engines?.node && !semver.satisfies(oldest, p.engines.node))
      .map(([path, p]) => `${path} wants node ${(p.engines as { node: string }).node}`);
    expect(refusing, `Node ${oldest}`).toEqual([]);
  });
});
