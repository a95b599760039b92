import type { Platform } from "../core/mod.ts";

/**
 * What an answer may say about files: `text` with every absolute path into the repository made
 * relative to it (`/srv/repo/fn/x` → `fn/x`, the root itself `.`, a sibling that starts alike —
 * `/srv/repo2` — left), and module loaders' query strings (tsx's `?namespace=`) dropped. The roots
 * are the repository as given, if absolute, and as resolved (symlinks followed).
 */
export async function pathRedaction(platform: Pick<Platform, "realPath">, repository: string): Promise<(text: string) => string> {
  const given = repository.startsWith("/") ? repository.replace(/\/+$/, "") : undefined;
  // Longest first, so a root inside another is taken out whole.
  const roots = [...new Set([await platform.realPath(repository), given])].filter((r): r is string => !!r && r !== "/").sort((a, b) => b.length - a.length);
  const alone = roots.map((root) => new RegExp(`${root.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w.-])`, "g"));
  return (text) => {
    let out = text;
    roots.forEach((root, i) => {
      if (!out.includes(root)) return;
      out = out.split(`file://${root}/`).join("").split(`${root}/`).join("").replace(alone[i]!, ".");
    });
    return out.includes("namespace=") ? out.replace(/\?(?:tsx-)?namespace=[\w-]+/g, "") : out;
  };
}
