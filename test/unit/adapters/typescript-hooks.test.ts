import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";
import { COMPILER_OPTIONS, load } from "../../../adapters/node/typescript-hooks.mjs";

const own = pathToFileURL("runtime/scheduler/dynamic/dynamic-batcher.ts").href;
const next = (url: string) => Promise.resolve({ format: "next", source: url, shortCircuit: true });

describe("Node's TypeScript load hook", () => {
  it("compiles tensorfn's own sources without esbuild's keepNames wrappers, with a source map", async () => {
    const { format, source } = await load(own, {}, next);
    expect(format).toBe("module");
    expect(source).toContain("class DynamicBatcher");
    expect(source).not.toContain("__name(");
    expect(source).toContain("sourceMappingURL=data:application/json;base64,");
  });

  it("compiles with the project's tsconfig.json options that change the emitted code", () => {
    const { compilerOptions } = JSON.parse(readFileSync("tsconfig.json", "utf8")) as { compilerOptions: Record<string, unknown> };
    expect(COMPILER_OPTIONS).toEqual({ target: compilerOptions.target, verbatimModuleSyntax: compilerOptions.verbatimModuleSyntax });
  });

  it("hands everything else on (node_modules, other folders, files that are not .ts)", async () => {
    for (const url of [pathToFileURL("functions/ocr/ppocr.ts").href, pathToFileURL("bench/suites/fuzz.ts").href, pathToFileURL("node_modules/zod/index.js").href, `${own}?tsx-namespace=1`]) {
      expect((await load(url, {}, next)).format).toBe("next");
    }
  });

  it("serves under Node with it: names, stack lines and errors come out as in the sources", () => {
    const script = `
      import { registerTypeScript } from "./adapters/node/register-typescript.mjs";
      registerTypeScript();
      const { invalidArg, RuntimeError } = await import("./runtime/core/errors.ts");
      const error = invalidArg("bad");
      console.log(JSON.stringify({ name: RuntimeError.name, isRuntime: error instanceof RuntimeError, at: error.stack.split("\\n")[1] }));`;
    const run = spawnSync("node", ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    const out = JSON.parse(run.stdout) as { name: string; isRuntime: boolean; at: string };
    expect(out.name).toBe("RuntimeError");
    expect(out.isRuntime).toBe(true);
    expect(out.at).toMatch(/runtime\/core\/errors\.ts:\d+:\d+\)$/);
  });
});
