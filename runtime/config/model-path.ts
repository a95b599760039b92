/**
 * The lexical rule for a file path a config names (`default_model_filename`): relative to the
 * version folder, forward slashes, no `.`/`..` segments, no absolute or drive paths, no control
 * characters. Symlinks are checked where the file is opened (repository/safe-path.ts).
 */
export function modelPathProblem(path: string): string | undefined {
  const quoted = JSON.stringify(path);
  if (path.length === 0) return "must not be empty";
  if (path.length > 255) return `${JSON.stringify(path.slice(0, 64) + "…")} is longer than 255 characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(path)) return `${quoted} contains a control character or a backslash; use a plain relative path such as model.onnx`;
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return `${quoted} is absolute; name a file inside the version folder, such as model.onnx`;
  const segments = path.split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..")) {
    return `${quoted} leaves or skips a folder ('..', '.' or '//'); name a file inside the version folder, such as model.onnx`;
  }
  return undefined;
}

/** What resolving a path needs: a subset of `Platform`. */
export interface PathResolver {
  /** The canonical path with symlinks resolved, or undefined when it does not exist. */
  realPath(path: string): Promise<string | undefined>;
}

/**
 * The real path of `relative` under `folder` when it passes the lexical rule, exists, and — after
 * symlinks are resolved — is still inside `folder`'s real path; otherwise undefined. Missing and
 * "exists outside" look the same on purpose: the answer must not reveal what lies outside.
 */
export async function resolveInside(resolver: PathResolver, folder: string, relative: string): Promise<string | undefined> {
  if (relative.split("/").some((segment) => modelPathProblem(segment) !== undefined)) return undefined;
  const [root, target] = await Promise.all([resolver.realPath(folder), resolver.realPath(`${folder}/${relative}`)]);
  if (root === undefined || target === undefined) return undefined;
  const slash = (p: string) => p.replaceAll("\\", "/");
  const base = slash(root).replace(/\/+$/, "");
  return slash(target).startsWith(`${base}/`) ? target : undefined;
}
