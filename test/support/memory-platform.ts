import type { DirEntry, Platform } from "../../runtime/mod.ts";

/**
 * A Platform over an in-memory file tree, for lifecycle tests that need a repository but no disk:
 * `files` maps "repo/fn/function.yaml" → text or bytes. `touch()` changes a file (new mtime).
 */
export class MemoryPlatform implements Platform {
  readonly name = "memory";
  readonly files = new Map<string, { bytes: Uint8Array; mtimeMs: number }>();
  readonly lines: string[] = [];
  #clock = 0;
  readonly log = {
    info: (m: string) => void this.lines.push(`info ${m}`),
    warn: (m: string) => void this.lines.push(`warn ${m}`),
    error: (m: string) => void this.lines.push(`error ${m}`),
  };

  constructor(files: Record<string, string | Uint8Array> = {}) {
    for (const [path, content] of Object.entries(files)) this.write(path, content);
  }

  write(path: string, content: string | Uint8Array): void {
    this.files.set(path, { bytes: typeof content === "string" ? new TextEncoder().encode(content) : content, mtimeMs: ++this.#clock });
  }

  remove(prefix: string): void {
    for (const path of [...this.files.keys()]) if (path === prefix || path.startsWith(`${prefix}/`)) this.files.delete(path);
  }

  async readFile(path: string): Promise<Uint8Array> {
    const file = this.files.get(path);
    if (!file) throw new Error(`ENOENT: ${path}`);
    return file.bytes;
  }

  async readTextFile(path: string): Promise<string> {
    return new TextDecoder().decode(await this.readFile(path));
  }

  async readDir(path: string): Promise<DirEntry[]> {
    const names = new Map<string, boolean>();
    for (const file of this.files.keys()) {
      if (!file.startsWith(`${path}/`)) continue;
      const [first, ...rest] = file.slice(path.length + 1).split("/");
      names.set(first!, (names.get(first!) ?? false) || rest.length > 0);
    }
    if (names.size === 0) throw new Error(`ENOENT: ${path}`);
    return [...names].map(([name, isDirectory]) => ({ name, isDirectory, isFile: !isDirectory }));
  }

  async stat(path: string) {
    const file = this.files.get(path);
    if (file) return { isFile: true, isDirectory: false, size: file.bytes.byteLength, mtimeMs: file.mtimeMs };
    const isDir = [...this.files.keys()].some((f) => f.startsWith(`${path}/`));
    return isDir ? { isFile: false, isDirectory: true, size: 0, mtimeMs: 0 } : undefined;
  }

  /** No symlinks in memory: a path that exists is its own real path (after `//` and `.` are folded). */
  async realPath(path: string): Promise<string | undefined> {
    const parts: string[] = [];
    for (const part of path.split("/")) {
      if (part === "..") parts.pop();
      else if (part !== "." && part !== "") parts.push(part);
    }
    const real = parts.join("/");
    return (await this.stat(real)) ? real : undefined;
  }

  env(): string | undefined {
    return undefined;
  }

  cpuCount(): number {
    return 2;
  }
}
