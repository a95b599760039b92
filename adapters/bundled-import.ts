// A handler imported as one fresh module: esbuild bundles it with what it imports from its folder,
// its packages resolved to absolute file URLs (handler-packages.ts: the repository's own, else
// tensorfn's), with an inline source map, into a file the runtime imports and then removes. A new
// file each time, so that a reload evaluates the folder's modules again (Deno never forgets a
// module; Node forgets none of an ES module graph). Since nothing in it resolves relative to where
// it lies, it is written to a temporary folder, so a repository mounted read-only works as well;
// beside the handler (a dot-file the repository poll leaves out) where no temporary folder can be written.
import type { Plugin } from "esbuild";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, extname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { handlerPackages } from "./handler-packages.ts";

const LOADERS = { ".ts": "ts", ".mts": "ts", ".cts": "ts", ".tsx": "tsx", ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "jsx" } as const;

/**
 * Imports `path` bundled as above; `undefined` when no folder can be written, for the caller to
 * import it another way. A bundle that does not build throws esbuild's error (the load's compile
 * check has reported it first).
 */
export async function importBundled(path: string, tag: string): Promise<Record<string, unknown> | undefined> {
  const folder = dirname(path);
  const name = `.tensorfn-${basename(path, extname(path))}-${encodeURIComponent(tag)}-${crypto.randomUUID().slice(0, 8)}.mjs`;
  // Where it is written is chosen first: the source map names the sources relative to it.
  const temporary = await mkdtemp(join(tmpdir(), "tensorfn-handler-")).catch(() => undefined);
  const dir = temporary ?? folder;
  try {
    // esbuild's API is loaded with the first handler: a server of models alone never pays its import.
    const { build } = await import("esbuild");
    const result = await build({
      entryPoints: [path], bundle: true, write: false, platform: "node", format: "esm", conditions: [],
      sourcemap: "inline", logLevel: "silent", absWorkingDir: folder, outfile: join(dir, name), plugins: [keepImportMeta, handlerPackages({ rewrite: true })],
    });
    try {
      await writeFile(join(dir, name), result.outputFiles[0]!.contents, { flag: "wx" });
    } catch {
      return undefined;
    }
    return await import(pathToFileURL(join(dir, name)).href);
  } finally {
    await rm(temporary ?? join(folder, name), { recursive: true, force: true });
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
