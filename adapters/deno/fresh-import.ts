// Deno keeps every module it evaluated until the process exits, so a query string on the handler
// gives a new handler module over the same, cached, imports. A re-import therefore bundles the
// handler with what it imports from its folder (esbuild; packages stay imports) into a dot-file
// beside it, where package imports resolve as they did, imports that and removes it. The repository
// poll leaves dot-files out, so the file does not reload the function. Inline source maps: Deno
// maps stack frames back to the TypeScript files.
import { build } from "esbuild";
import type { Plugin } from "esbuild";
import { readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import { pathToFileURL } from "node:url";

const LOADERS = { ".ts": "ts", ".mts": "ts", ".cts": "ts", ".tsx": "tsx", ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "jsx" } as const;

/**
 * Imports `path` so that it and the modules it imports from its folder evaluate again: the first
 * import of a path is Deno's own; later ones go through a bundle. Where the folder is read-only,
 * the handler alone is new (`onStale` says so).
 */
export function freshImporter(onStale: (message: string) => void): (path: string, tag: string) => Promise<Record<string, unknown>> {
  const imported = new Set<string>();
  return async (path, tag) => {
    const plain = () => import(`${pathToFileURL(path).href}?tensorfn=${encodeURIComponent(tag)}`);
    if (!imported.has(path)) {
      const module = await plain();
      imported.add(path);
      return module;
    }
    const folder = dirname(path);
    const out = join(folder, `.tensorfn-${basename(path, extname(path))}-${encodeURIComponent(tag)}-${crypto.randomUUID().slice(0, 8)}.mjs`);
    const result = await build({
      entryPoints: [path], bundle: true, write: false, packages: "external", platform: "node", format: "esm",
      sourcemap: "inline", logLevel: "silent", absWorkingDir: folder, outfile: out, plugins: [keepImportMeta],
    });
    try {
      await writeFile(out, result.outputFiles[0]!.contents);
    } catch (error) {
      onStale(`cannot write beside ${basename(path)} (${(error as Error).message}): the re-imported handler runs over the modules it imported before; restart the server to load their changes`);
      return await plain();
    }
    try {
      return await import(pathToFileURL(out).href);
    } finally {
      await rm(out, { force: true });
    }
  };
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
