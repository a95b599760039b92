import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnServer } from "../../harness/server-process.ts";
import { packCheckout, run } from "../../harness/pack.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");

// A user's project: tensorfn packed from this checkout, installed from the tarball into an empty
// project without devDependencies, two functions made with `tensorfn init` (one from a model, with
// a handler), a handler that imports a value and types from "tensorfn", all type-checked by tsc
// and served under Node, Bun and Deno. Node only: it drives the three runtimes itself.
describe("tensorfn as a package in an empty project", () => {
  let project: string;
  let packed: string;
  let installOutput = "";

  beforeAll(() => {
    const pack = packCheckout();
    packed = pack.dir;
    const tarball = pack.tarball;
    project = mkdtempSync(join(tmpdir(), "tensorfn-user-"));
    // The approvals docs/guides/your-project.md gives (a tarball is approved by its file: spec, as `npm install-scripts approve` writes it).
    const allowScripts = { [`file:${tarball}`]: true, esbuild: true, "onnxruntime-node": false, protobufjs: false };
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "my-app", private: true, type: "module", allowScripts }));
    installOutput = run("npm", ["install", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline", tarball], project);
    const tensorfn = join(project, "node_modules", ".bin", "tensorfn");
    run(tensorfn, ["init", "functions/hello"], project);
    run(tensorfn, ["init", "functions/add", "--model", join(ROOT, "functions/simple/1/model.onnx"), "--handler"], project);
    run(tensorfn, ["init", "functions/greet"], project);
    // A value from "tensorfn", not only types: at run time it must resolve to the package's JavaScript.
    writeFileSync(
      join(project, "functions/greet/handler.ts"),
      `import { HandlerError } from "tensorfn";
import type { FunctionRequest, HandlerContext } from "tensorfn";

export function execute(requests: FunctionRequest[], ctx: HandlerContext): string[] {
  return requests.map((r) => {
    const { name } = r.json<{ name?: string }>();
    if (!name) throw new HandlerError("send a name", 422);
    return \`hello \${name} from \${ctx.name}\`;
  });
}
`,
    );
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2023", "dom"], strict: true, noEmit: true }, include: ["functions"] }));
  }, 300_000);

  afterAll(() => {
    for (const dir of [project, packed]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("installs without devDependencies or a warning, and `tensorfn check` passes what `init` wrote", () => {
    expect(installOutput).not.toMatch(/npm warn/i);
    expect(existsSync(join(project, "node_modules", "vitest"))).toBe(false);
    expect(existsSync(join(project, "node_modules", "tensorfn", "test"))).toBe(false);
    expect(run(join(project, "node_modules", ".bin", "tensorfn"), ["check", "functions"], project)).toContain("functions: ok");
  });

  it("type-checks handlers against the package's types, and tsc catches a handler that misuses them", () => {
    run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "."], project);
    writeFileSync(join(project, "functions/greet/wrong.ts"), `import type { HandlerContext } from "tensorfn";\nexport const n = (ctx: HandlerContext): number => ctx.name;\n`);
    try {
      expect(() => run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "."], project)).toThrow(/wrong\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
    } finally {
      rmSync(join(project, "functions/greet/wrong.ts"));
    }
  });

  const entries: [string, () => [string, string[]]][] = [
    ["node", () => [join(project, "node_modules", ".bin", "tensorfn"), []]],
    ["bun", () => [join(BIN, "bun"), ["node_modules/tensorfn/adapters/bun/main.ts"]]],
    ["deno", () => [join(BIN, "deno"), ["run", "-A", "--unstable-no-legacy-abort", "node_modules/tensorfn/dist/deno/main.mjs"]]],
  ];
  it.each(entries)("serves the project's functions under %s", { timeout: 120_000 }, async (_name, entry) => {
    const [command, args] = entry();
    const server = await spawnServer(command, [...args, "serve", "--repo", "functions", "--port", "0"], { cwd: project });
    try {
      // Node runs the CLI compiled ahead (an installed tensorfn once never could: ~0.8 s more a start).
      expect(server.output()).not.toMatch(/could not be compiled ahead/);
      const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: "POST", body: JSON.stringify(body) });
      let r = await post("/v1/functions/hello", { name: "ada" });
      expect([r.status, await r.json()]).toEqual([200, { greeting: "hello, ada" }]);
      r = await post("/v1/functions/greet", { name: "ada" });
      expect([r.status, await r.json()]).toEqual([200, "hello ada from greet"]);
      r = await post("/v1/functions/greet", {});
      expect([r.status, await r.json()]).toEqual([422, { error: "function 'greet' execute: send a name" }]);
      const ones = new Array(16).fill(1);
      const counting = Array.from({ length: 16 }, (_, i) => i);
      r = await post("/v1/functions/add", { INPUT0: counting, INPUT1: ones });
      expect([r.status, await r.json()]).toEqual([200, { OUTPUT0: counting.map((i) => i + 1), OUTPUT1: counting.map((i) => i - 1) }]);
      r = await post("/v2/models/add/infer", { inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: counting }, { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: ones }] });
      expect(((await r.json()) as { outputs: { name: string; data: number[] }[] }).outputs.find((o) => o.name === "OUTPUT0")!.data).toEqual(counting.map((i) => i + 1));
      // The install built the native addon: every entry finds it where the package has it (the Deno bundle looked beside itself).
      if (existsSync(join(project, "node_modules/tensorfn/native/build/Release/tensorfn_native.node"))) expect(server.output()).not.toContain("native addon was not built");
    } finally {
      await server.stop();
    }
  });
});
