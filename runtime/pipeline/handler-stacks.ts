// How a handler's errors are logged, whether a call's failure (HandlerHost) or an error that
// escaped it (HandlerEscapes): readable stacks, and the same line at most once a minute.

/** How often the same line is logged again (its repeats are counted meanwhile). */
export const RELOG_MS = 60_000;
/** Lines remembered for that, in all: a handler that throws a new message each time must not grow the map. */
const MAX_REMEMBERED = 1000;

/** Longest message and stack logged for one error: a handler's error may carry anything. */
const MAX_LOGGED_CHARS = 4000;

/** Lets the same key through once per RELOG_MS, counting the repeats it held back. */
export class RepeatGate {
  readonly #seen = new Map<string, { at: number; repeats: number }>();

  /** `undefined`: logged within the last minute (counted); else the repeats held back since the last time. */
  admit(key: string, now: number): number | undefined {
    const seen = this.#seen.get(key);
    if (seen && now - seen.at < RELOG_MS) {
      seen.repeats++;
      return undefined;
    }
    if (!seen && this.#seen.size >= MAX_REMEMBERED) this.#seen.clear();
    this.#seen.set(key, { at: now, repeats: 0 });
    return seen?.repeats ?? 0;
  }
}

/** What a logged line says of the repeats `RepeatGate.admit` held back. */
export function repeatsNote(repeats: number): string {
  return repeats > 0 ? ` (${repeats} more time(s) in the last minute)` : "";
}

/**
 * The error's message and stack with every module named by its file path: a module compiled on
 * the fly appears in stacks as a `data:` URL holding its whole source, with the file it came
 * from in a `filePath=` parameter (tsx); `file://` URLs become paths.
 */
export function readableStack(error: unknown): string {
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : `thrown value: ${safeString(error)}`;
  return text
    .replace(/data:[a-z/]+(?:;[^,\s]*)?,\S*?[?&]filePath=([^\s):?&]+)(?:[^\s):]*)/gi, (_, file: string) => decodePath(file))
    .replace(/data:[a-z/]+(?:;[^,\s]*)?,[^\s)]{80,}/gi, "<module compiled on the fly>")
    .replace(/file:\/\/([^\s):]+)/g, (_, file: string) => decodePath(file))
    .replace(/\?(?:tsx-namespace|namespace|tensorfn)=[^\s):]*/g, "");
}

function decodePath(encoded: string): string {
  try {
    return decodeURIComponent(encoded).replace(/\?.*$/, "");
  } catch {
    return encoded;
  }
}

/** The stack as logged: paths under the function's folder relative to the repository (its parent), bounded in length. */
export function shorten(stack: string, folder: string | undefined): string {
  let text = stack;
  if (folder) {
    const repository = folder.slice(0, folder.lastIndexOf("/") + 1);
    if (repository.length > 1) text = text.split(repository).join("");
  }
  return text.length > MAX_LOGGED_CHARS ? `${text.slice(0, MAX_LOGGED_CHARS)}… (${text.length - MAX_LOGGED_CHARS} more characters)` : text;
}

/**
 * A call's failure as logged: `shorten`ed, and cut below its last frame in the function's folder
 * (the frames under it are tensorfn's, the same for every failure). A stack with no frame there
 * (a package's error, say) stays whole.
 */
export function handlerStack(error: unknown, folder: string): string {
  const name = folder.slice(folder.lastIndexOf("/") + 1);
  const stack = shorten(readableStack(error), folder);
  const lines = stack.split("\n");
  let last = -1;
  lines.forEach((line, i) => {
    if (/^\s+at /.test(line) && (line.includes(`(${name}/`) || line.includes(` ${name}/`))) last = i;
  });
  const cut = lines.length - 1 - last;
  return last < 0 || cut === 0 ? stack : `${lines.slice(0, last + 1).join("\n")}\n    … ${cut} frame${cut === 1 ? "" : "s"} of tensorfn`;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : safeString(error);
}

function safeString(value: unknown): string {
  try {
    return String(value).slice(0, 500);
  } catch {
    return "(a value that cannot be shown)";
  }
}
