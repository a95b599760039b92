// The packages a handler imports, resolved when it is compiled: from the handler's own folder up
// (the repository's node_modules, where a package.json at its root and `npm ci` put them), else
// from tensorfn's own install (a package tensorfn depends on, such as fflate, needs no second copy),
// else the load fails naming the package and where to install it. Each resolved import becomes an
// absolute file URL, so the compiled handler imports the same files wherever it is written (a
// repository mounted read-only is compiled into a temporary folder).
import { builtinModules } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Plugin } from "esbuild";

/** Where tensorfn's own packages resolve from: its root (this file lies in adapters/). */
const TENSORFN_ROOT = fileURLToPath(new URL("../", import.meta.url));
const BUILTINS = new Set(builtinModules);

/** The first segment(s) of a bare specifier: its package's name (`@scope/name` or `name`). */
export function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/**
 * The esbuild plugin: bare imports resolved as above. `rewrite` false leaves a resolved import as
 * written (a compile check, which only needs to know it resolves).
 */
export function handlerPackages(options: { rewrite: boolean }): Plugin {
  return {
    name: "handler-packages",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === "handler-packages" || args.path.startsWith("node:") || BUILTINS.has(args.path) || /^[a-z][a-z0-9+.-]*:/i.test(args.path)) return undefined;
        const from = async (resolveDir: string) => {
          const found = await build.resolve(args.path, { kind: args.kind, resolveDir, pluginData: "handler-packages" });
          return found.errors.length === 0 && found.path ? found.path : undefined;
        };
        const found = (await from(args.resolveDir)) ?? (await from(TENSORFN_ROOT));
        if (found) return { path: options.rewrite ? pathToFileURL(found).href : args.path, external: true };
        const name = packageName(args.path);
        return {
          errors: [{ text: `cannot find package '${name}': install it with the repository (a package.json at the repository's root listing it, then \`npm ci\` there; docs/guides/handlers.md#packages)` }],
        };
      });
    },
  };
}
