// A handler imported as one fresh module: esbuild bundles it with what it imports from its folder
// (packages stay imports) into a dot-file beside it, with an inline source map, and the runtime
// imports that file and it is removed. Beside the handler, so that package imports resolve as
// they would from the handler itself; a new file each time, so that a reload evaluates the
// folder's modules again (Deno never forgets a module; Node forgets none of an ES module graph).
// The repository poll leaves dot-files out, so the file does not reload the function.
import { build } from "esbuild";
import type { Plugin } from "esbuild";
import { readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import { pathToFileURL } from "node:url";

const LOADERS = { ".ts": "ts", ".mts": "ts", ".cts": "ts", ".tsx": "tsx", ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "jsx" } as const;

/**
 * Imports `path` bundled as above; `undefined` when the folder cannot be written (a read-only
 * repository), for the caller to import it another way. A bundle that does not build throws
 * esbuild's error (the load's compile check has reported it first).
 */
export async function importBundled(path: string, tag: string): Promise<Record<string, unknown> | undefined> {
  const folder = dirname(path);
  const out = join(folder, `.tensorfn-${basename(path, extname(path))}-${encodeURIComponent(tag)}-${crypto.randomUUID().slice(0, 8)}.mjs`);
  const result = await build({
    entryPoints: [path], bundle: true, write: false, packages: "external", platform: "node", format: "esm",
    sourcemap: "inline", logLevel: "silent", absWorkingDir: folder, outfile: out, plugins: [keepImportMeta],
  });
  try {
    await writeFile(out, result.outputFiles[0]!.contents, { flag: "wx" });
  } catch {
    return undefined;
  }
  try {
    return await import(pathToFileURL(out).href);
  } finally {
    await rm(out, { force: true });
  }
}

// Each bundled file's import.meta still names the file it came from (a handler reading
// `new URL("./labels.txt", import.meta.url)` from a subfolder finds its file).
const keepImportMeta: Plugin = {
  name: "keep-import-meta",
  setup(b) {
    b.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async (args) => {
      if (args.path.includes("/node_modules/")) return undefined;
      const source = await readFile(args.path, "utf8");
      const facts: Record<string, string> = { url: pathToFileURL(args.path).href, filename: args.path, dirname: dirname(args.path) };
      const contents = source.replace(/\bimport\.meta\.(url|filename|dirname)\b/g, (_, key: string) => JSON.stringify(facts[key]));
      return { contents, loader: LOADERS[extname(args.path) as keyof typeof LOADERS] };
    });
  },
};
