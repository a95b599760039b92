import { describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnServer } from "../../harness/server-process.ts";
import { idat, ihdr, png } from "../../harness/png-chunks.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The tracked files of this checkout (what a clone holds), copied to a fresh folder. */
function copyOfCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), "tensorfn-prod-"));
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the working tree, not yet committed
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  return dir;
}

// README's production install: no devDependencies, and every example function still serves —
// the example models are built (models/ is a workspace with its own dependencies) and what the
// example handlers import at run time is installed.
describe("npm ci --omit=dev", () => {
  it("installs without devDependencies and `tensorfn serve --repo functions` serves every example function", { timeout: 300_000 }, async () => {
    const dir = copyOfCheckout();
    try {
      const install = spawnSync("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: dir, encoding: "utf8", env: { ...process.env, CI: "true" } });
      expect(install.status, install.stderr).toBe(0);
      expect(existsSync(join(dir, "node_modules", "vitest"))).toBe(false);
      const names = readdirSync(join(dir, "functions"));
      const server = await spawnServer("node", ["adapters/node/bin.mjs", "serve", "--repo", "functions", "--port", "0", "--model-control-mode", "explicit", ...names.flatMap((n) => ["--load-model", n])], { cwd: dir });
      try {
        const index = (await (await fetch(`${server.url}/v2/repository/index`, { method: "POST" })).json()) as { name: string; state: string }[];
        expect(index.filter((r) => r.state !== "READY")).toEqual([]);
        expect(index.map((r) => r.name).sort()).toEqual([...names].sort());
        // The handlers run: word_count (no imports) and ocr (its PNG decoder imports fflate).
        const words = await fetch(`${server.url}/v1/functions/word_count`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "a b a" }) });
        expect(await words.json()).toEqual({ words: 3, longest: "a" });
        const white = png(ihdr(64, 32, 8, 0), idat(Array.from({ length: 32 }, () => new Array<number>(64).fill(255))));
        const ocr = await fetch(`${server.url}/v1/functions/ocr`, { method: "POST", headers: { "content-type": "image/png" }, body: white });
        expect(ocr.status).toBe(200);
        expect(await ocr.json()).toMatchObject({ width: 64, height: 32, lines: [] });
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
