// tensorfn's own TypeScript for Node, compiled ahead into a few cached ES modules: the CLI (with
// the runtime) and what a worker thread loads. Loading ~140 files one by one through the module
// loader hooks (typescript-hooks.mjs, behind tsx) cost a start ~0.8 s and every ORT worker
// thread ~0.3 s more than the same code bundled (`npx tsx bench/studies/start-up.ts`). The
// bundle is built with esbuild, as the hooks compile (no keepNames, the same compiler options),
// and used while its inputs are byte for byte the ones it was built from; any change rebuilds it.
// Where it cannot be built or stored, bin.mjs loads the sources through the hooks as before.
// The cache lives in node_modules/.cache: code run from there is trusted as node_modules itself is.
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { COMPILER_OPTIONS } from "./compiler-options.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** What is compiled: the CLI entry, and the modules a worker thread imports (by their source). */
const ENTRIES = {
  cli: "adapters/node/cli.ts",
  "onnxruntime-worker": "runtime/backends/onnxruntime-worker.ts",
  native: "native/index.ts",
  // A function's own process (isolation: process): its start is a restart's wait.
  "function-process": "adapters/function-process-entry.ts",
};

/**
 * Dependencies compiled in with the sources: plain JavaScript whose many small modules cost a start
 * more to resolve and load one by one (~70 ms for these) than to read as part of the bundle. The
 * rest stay imports: onnxruntime's packages load native code or WebAssembly beside their own
 * files, and esbuild and tsx are only needed to compile.
 */
const COMPILED_IN = new Set(["zod", "yaml", "lru-cache", "@huggingface/tokenizers", "@huggingface/jinja", "@bufbuild/protobuf"]);

/** Build directories no start has used for this long are removed (a start uses its own at once). */
const STALE_MS = 24 * 60 * 60 * 1000;

/**
 * @typedef {{ cli: string, native: string, functionProcess: string, workers: Record<string, string> }} CompiledSources
 * `cli`, `native` and `functionProcess`: file URLs of the compiled modules; `workers`: compiled module by source URL.
 */

/**
 * The compiled sources, built first if the cache has none for the sources as they are now.
 * @param {{ cacheDir?: string }} [options]
 * @returns {Promise<CompiledSources | undefined>} undefined where esbuild or the cache is unusable.
 */
export async function compiledSources(options = {}) {
  const cacheDir = options.cacheDir ?? join(ROOT, "node_modules", ".cache", "tensorfn");
  try {
    // esbuild itself is imported only to build: its version comes from its package.json.
    const { version } = JSON.parse(await readFile(createRequire(import.meta.url).resolve("esbuild/package.json"), "utf8"));
    const key = digest(JSON.stringify([version, process.versions.node, COMPILER_OPTIONS, ENTRIES, [...COMPILED_IN]]));
    const current = join(cacheDir, "current.json");
    const manifest = await readFile(current, "utf8").then(JSON.parse, () => undefined);
    // The manifest names a build directory of this cache, nothing else.
    if (manifest?.key === key && /^[0-9a-f]{16}$/.test(manifest.dir) && (await unchanged(manifest.inputs))) {
      const found = located(cacheDir, manifest.dir);
      // A build directory removed by hand since is built again.
      if (await stat(fileURLToPath(found.cli)).catch(() => undefined)) return found;
    }
    const built = await build(cacheDir, key);
    await writeAtomically(current, JSON.stringify(built));
    await removeStale(cacheDir, built.dir);
    return located(cacheDir, built.dir);
  } catch {
    return undefined;
  }
}

/**
 * Whether every input still has the content the build read: the same size and modification time
 * (a stat each), else the same bytes (a checkout that only touched the file).
 */
async function unchanged(inputs) {
  if (!inputs || typeof inputs !== "object") return false;
  const checks = Object.entries(inputs).map(async ([path, [size, mtimeMs, hash]]) => {
    const file = join(ROOT, path);
    const s = await stat(file);
    return (s.size === size && s.mtimeMs === mtimeMs) || digest(await readFile(file)) === hash;
  });
  return (await Promise.all(checks.map((c) => c.catch(() => false)))).every(Boolean);
}

async function build(cacheDir, key) {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, path]) => [name, join(ROOT, path)])),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: `node${process.versions.node}`,
    // CommonJS compiled in (yaml) calls require: give the modules one.
    banner: { js: 'import { createRequire as __tensorfnRequire } from "node:module"; const require = __tensorfnRequire(import.meta.url);' },
    sourcemap: "linked",
    tsconfigRaw: { compilerOptions: COMPILER_OPTIONS },
    outdir: join(cacheDir, "out"),
    entryNames: "[name]",
    chunkNames: "chunk-[hash]",
    outExtension: { ".js": ".mjs" },
    metafile: true,
    write: false,
    logLevel: "silent",
    plugins: [sourceUrls, dependencies],
  });
  const inputs = {};
  for (const path of Object.keys(result.metafile.inputs)) {
    const file = join(ROOT, path);
    const { size, mtimeMs } = await stat(file);
    inputs[path] = [size, mtimeMs, digest(await readFile(file))];
  }
  // The directory is named by what it holds: starts that build the same sources at once agree.
  const files = result.outputFiles.map((f) => ({ name: relative(join(cacheDir, "out"), f.path), contents: f.contents }));
  const dir = digest(files.map((f) => `${f.name}\0${digest(f.contents)}`).join("\n")).slice(0, 16);
  const target = join(cacheDir, dir);
  if (!(await stat(target).catch(() => undefined))) {
    const partial = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    for (const f of files) {
      await mkdir(dirname(join(partial, f.name)), { recursive: true });
      await writeFile(join(partial, f.name), f.contents);
    }
    await rename(partial, target).catch(async (error) => {
      await rm(partial, { recursive: true, force: true });
      if (!(await stat(target).catch(() => undefined))) throw error;
    });
  }
  return { key, dir, inputs };
}

/**
 * The sources keep their own `import.meta.url`: paths beside them (the worker bootstrap, the
 * native addon, a worker module) resolve as they do uncompiled, wherever the bundle lies.
 */
const sourceUrls = {
  name: "source-urls",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      return { contents: source.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)), loader: "ts" };
    });
  },
};

/**
 * The sources' bare imports stay imports, but for the packages in COMPILED_IN; what those import
 * is compiled in too (their own dependencies, as they resolve from where they lie), Node's built-in modules aside.
 */
const dependencies = {
  name: "dependencies",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      // A compiled-in package's own imports are compiled in too. tensorfn's sources are told by
      // where they lie, not by "node_modules" in their path: an installed tensorfn lies there too,
      // and read so it compiled onnxruntime-node in and failed, so every installed start ran from
      // the TypeScript sources.
      if (!isOwnSource(args.importer)) return undefined;
      const name = args.path.startsWith("@") ? args.path.split("/").slice(0, 2).join("/") : args.path.split("/")[0];
      return COMPILED_IN.has(name) ? undefined : { path: args.path, external: true };
    });
  },
};

/** Whether `file` is one of tensorfn's own files (under ROOT, outside its node_modules). */
function isOwnSource(file) {
  const path = relative(ROOT, file);
  return path !== "" && !path.startsWith("..") && !isAbsolute(path) && path.split(sep)[0] !== "node_modules";
}

function located(cacheDir, dir) {
  const url = (name) => pathToFileURL(join(cacheDir, dir, `${name}.mjs`)).href;
  return {
    cli: url("cli"),
    native: url("native"),
    functionProcess: url("function-process"),
    workers: { [pathToFileURL(join(ROOT, ENTRIES["onnxruntime-worker"])).href]: url("onnxruntime-worker") },
  };
}

async function writeAtomically(path, text) {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(partial, text);
  await rename(partial, path);
}

/** Removes other builds (and what an interrupted one left) unchanged for STALE_MS. */
async function removeStale(cacheDir, keep) {
  const now = Date.now();
  for (const name of await readdir(cacheDir).catch(() => [])) {
    if (name === keep || name === "current.json") continue;
    const path = resolve(cacheDir, name);
    const s = await stat(path).catch(() => undefined);
    if (s && now - s.mtimeMs > STALE_MS) await rm(path, { recursive: true, force: true }).catch(() => undefined);
  }
}

function digest(data) {
  return createHash("sha256").update(data).digest("hex");
}

// `node adapters/node/compiled-sources.mjs` (npm's prepare): compile now, so that the first start need not.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (!(await compiledSources())) console.warn("tensorfn: could not compile the sources ahead; starts will load them through the TypeScript hooks");
}
