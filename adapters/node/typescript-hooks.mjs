// A module.register load hook for tensorfn's own TypeScript (runtime/ and adapters/) under Node:
// esbuild's transform as tsx does it, but without `keepNames`, which tsx always sets. keepNames
// wraps every arrow function bound to a name in `__name(fn, "fn")` (an Object.defineProperty)
// each time it is created, and the serving path creates such closures per request: 5 % of the
// server's CPU under `simple` at 8 clients (`node --cpu-prof adapters/node/bin.mjs serve …`). V8 infers those names by itself, and
// nothing here is minified, so the names stay the same. Everything else (node_modules, function
// handlers loaded with tsImport, bench and tests) goes on to tsx. Like tsx, results are cached on
// disk by content, so a start does not compile every file again.
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transform, version } from "esbuild";
import { COMPILER_OPTIONS } from "./compiler-options.mjs";

const root = new URL("../../", import.meta.url).href;
const own = [`${root}runtime/`, `${root}adapters/`];
export { COMPILER_OPTIONS };
const options = { loader: "ts", format: "esm", target: `node${process.versions.node}`, sourcemap: "inline", tsconfigRaw: { compilerOptions: COMPILER_OPTIONS } };
// process.getuid, not os.userInfo: a container's uid may have no passwd entry.
const uid = process.getuid?.();
const cacheDir = join(tmpdir(), `tensorfn-ts-${uid ?? "user"}`);
// Compiled code runs as this user: use the cache only in a folder this user owns and no one else may write.
const cacheReady = mkdir(cacheDir, { recursive: true, mode: 0o700 })
  .then(() => stat(cacheDir))
  .then((s) => s.isDirectory() && (uid === undefined || (s.uid === uid && (s.mode & 0o022) === 0)))
  .catch(() => false);

export async function load(url, context, next) {
  if (!url.endsWith(".ts") || !own.some((dir) => url.startsWith(dir))) return next(url, context);
  const source = await readFile(new URL(url), "utf8");
  const key = createHash("sha256").update(JSON.stringify([version, options, url])).update(source).digest("hex");
  const cached = join(cacheDir, `${key}.mjs`);
  const usable = await cacheReady;
  const hit = usable ? await readFile(cached, "utf8").catch(() => undefined) : undefined;
  if (hit !== undefined) return { format: "module", source: hit, shortCircuit: true };
  const { code } = await transform(source, { ...options, sourcefile: url });
  // Written aside and renamed, so a process reading it never sees half a file; a failure only costs the cache.
  const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  if (usable) await writeFile(partial, code, { mode: 0o600 }).then(() => rename(partial, cached)).catch(() => undefined);
  return { format: "module", source: code, shortCircuit: true };
}
