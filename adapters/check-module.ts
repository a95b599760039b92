// Platform.checkModule for Node and Bun (and Deno, through npm's esbuild): compiles a handler
// and what it imports relatively with esbuild, bundling into memory and running nothing. Bare
// imports (packages) stay external, but each must resolve as the import will resolve it
// (handler-packages.ts): a package installed nowhere fails the check, named.
import type { Message } from "esbuild";
import { isAbsolute, relative, resolve } from "node:path";
import type { CompileProblem } from "../runtime/mod.ts";
import { handlerPackages } from "./handler-packages.ts";

export async function checkModule(path: string, folder: string): Promise<CompileProblem[]> {
  const root = resolve(folder);
  path = resolve(path);
  try {
    // Loaded with the first handler (see bundled-import.ts).
    const { build } = await import("esbuild");
    await build({ entryPoints: [path], bundle: true, write: false, platform: "node", format: "esm", conditions: [], logLevel: "silent", absWorkingDir: root, plugins: [handlerPackages({ rewrite: false })] });
    return [];
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors;
    const entry = relative(root, path);
    // Not a compile error but esbuild itself failing (a runtime where it cannot start): check
    // nothing rather than fail every handler; importing it tells.
    if (!Array.isArray(errors) || errors.length === 0) return [];
    return errors.map((m) => {
      if (!m.location) return { file: entry, line: 0, column: 0, message: m.text };
      const file = relative(root, isAbsolute(m.location.file) ? m.location.file : resolve(root, m.location.file));
      return { file, line: m.location.line, column: m.location.column + 1, message: m.text };
    });
  }
}
