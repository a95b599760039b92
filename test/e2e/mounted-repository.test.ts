import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encode } from "fast-png";
import { drawPage } from "../../models/text-image.ts";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// A repository outside tensorfn's project (a mounted volume, a folder of the user's): its handlers
// import the repository's own packages (its node_modules), else those tensorfn itself depends on
// (the OCR chain's fflate), and an import installed nowhere fails the load naming the package.
// Under Node, Bun and Deno (TENSORFN_RUNTIME).
let server: TestServer;
let repo: string;
beforeAll(async () => {
  repo = tempRepository("ocr", "ocr_det", "ocr_cls", "ocr_rec");
  // A package of the repository's own, as `npm ci` at its root would install it.
  mkdirSync(join(repo, "node_modules", "shout"), { recursive: true });
  writeFileSync(join(repo, "node_modules", "shout", "package.json"), JSON.stringify({ name: "shout", version: "1.0.0", type: "module", exports: "./index.js" }));
  writeFileSync(join(repo, "node_modules", "shout", "index.js"), "export const shout = (s) => s.toUpperCase() + '!';\n");
  const handler = (imports: string) => `${imports}\nexport function execute(requests) { return requests.map((r) => ({ said: shout(r.json().text) })); }\n`;
  for (const [name, imports] of [["loud", `import { shout } from "shout";`], ["missing", `import { shout } from "no-such-package/sub";`]] as const) {
    mkdirSync(join(repo, name, "1"), { recursive: true });
    writeFileSync(join(repo, name, "1", ".keep"), "");
    writeFileSync(join(repo, name, "function.yaml"), "backend: handler\nhandler: handler.ts\n");
    writeFileSync(join(repo, name, "handler.ts"), handler(imports));
  }
  server = await startServer({ repository: repo });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe("a repository outside the project", () => {
  it("serves the OCR chain, whose handlers import a package only tensorfn has (fflate)", { timeout: 60_000 }, async () => {
    const image = drawPage(["PRICE 42"], { scale: 3, margin: 32, lineGap: 12, spaceWidth: 2 });
    const body = new Uint8Array(encode({ width: image.width, height: image.height, data: image.data, channels: 3, depth: 8 }));
    const res = await fetch(`${server.url}/v1/functions/ocr`, { method: "POST", body, headers: { "content-type": "image/png" } });
    const json = (await res.json()) as { lines?: { text: string }[]; error?: string };
    expect(res.status, json.error).toBe(200);
    expect(json.lines!.map((l) => l.text)).toEqual(["PRICE 42"]);
  });

  it("serves a handler that imports a package of the repository's own node_modules", async () => {
    const res = await fetch(`${server.url}/v1/functions/loud`, { method: "POST", body: JSON.stringify({ text: "hi" }) });
    expect(await res.json()).toEqual({ said: "HI!" });
  });

  it("fails the load of a handler importing a package installed nowhere, naming it and where to install it", async () => {
    const res = await fetch(`${server.url}/v1/functions/missing`, { method: "POST", body: JSON.stringify({ text: "hi" }) });
    const { error } = (await res.json()) as { error: string };
    expect(res.status, error).toBe(503); // a function whose load failed is unavailable, with the load's reason
    expect(error).toMatch(/missing\/handler\.ts:1:\d+: cannot find package 'no-such-package': install it with the repository \(a package\.json at the repository's root listing it, then `npm ci` there/);
    expect(error).not.toContain(repo);
  });
});
