// Builds what the "tensorfn" package ships compiled: dist/handler.mjs, the handler API a handler
// imports from "tensorfn" (package.json `exports`; Node runs no TypeScript from node_modules), its
// declarations in dist/types/ (editors, `tsc` in a user's project), and dist/deno/, the Deno entry. Run by `prepare`
// (a clone's `npm ci`) and `prepack` (`npm pack`, `npm publish`). Declarations need TypeScript, a
// devDependency: a production install (`npm ci --omit=dev`) builds the JavaScript alone.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const dist = join(root, "dist");
rmSync(dist, { recursive: true, force: true });
await build({
  entryPoints: [join(root, "runtime/handler.ts")],
  outfile: join(dist, "handler.mjs"),
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  logLevel: "warning",
});

// Deno runs no TypeScript from node_modules: its entry and the worker module it starts, compiled.
// Packages stay imports (Deno resolves them from node_modules); the worker is found beside the entry.
const WORKER = "onnxruntime-worker";
await build({
  entryPoints: { main: join(root, "adapters/deno/main.ts"), [WORKER]: join(root, `runtime/backends/${WORKER}.ts`) },
  outdir: join(dist, "deno"),
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  packages: "external",
  target: "es2022",
  logLevel: "warning",
  plugins: [
    {
      name: "compiled-worker",
      setup(b) {
        b.onLoad({ filter: /runtime\/backends\/onnxruntime-(node|web)-backend\.ts$/ }, async (args) => {
          const source = await readFile(args.path, "utf8");
          const contents = source.replaceAll(`"./${WORKER}.ts"`, `"./${WORKER}.mjs"`);
          if (contents === source) throw new Error(`${args.path} no longer names ./${WORKER}.ts: update build-dist.mjs`);
          return { contents, loader: "ts" };
        });
      },
    },
    {
      // Every other source keeps its own import.meta.url, as a URL relative to the bundle (all of
      // dist/deno/ is one folder): the native addon (native/build/), the function process's
      // bootstrap and package.json are found where the package has them, not beside the bundle.
      name: "source-urls",
      setup(b) {
        b.onLoad({ filter: /\.ts$/ }, async (args) => {
          const source = await readFile(args.path, "utf8");
          if (!source.includes("import.meta.url")) return undefined;
          const url = `new URL(${JSON.stringify(relative(join(dist, "deno"), args.path))}, import.meta.url).href`;
          return { contents: source.replaceAll("import.meta.url", url), loader: "ts" };
        });
      },
    },
  ],
});

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  console.log("dist: handler.mjs built; declarations skipped (no TypeScript: a production install needs none)");
  process.exit(0);
}
const run = spawnSync(process.execPath, [tsc, "-p", join(root, "deploy/npm/tsconfig.json")], { stdio: "inherit" });
if (run.status !== 0 || !existsSync(join(dist, "types/handler.d.ts"))) {
  console.error("dist: the declarations did not build");
  process.exit(1);
}
