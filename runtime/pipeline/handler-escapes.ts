import type { Clock, Logger } from "../core/mod.ts";

/** How an error escaped: thrown where nothing catches it (a timer), or a rejection nobody awaited. */
export type EscapeKind = "exception" | "rejection";

/** A function whose handler code lives in `folder`, as HandlerHost registers it. */
export interface EscapeOwner {
  name: string;
  /** The function's folder, resolved (absolute, symlinks followed): stack frames name files under it. */
  folder: string;
  /** Counts one escape against the function (its handler counters). */
  count(): void;
}

/** How often the same message of the same function is logged again (its repeats are counted meanwhile). */
const RELOG_MS = 60_000;
/** Messages remembered for that, in all: a handler that throws a new message each time must not grow the map. */
const MAX_REMEMBERED = 1000;

/**
 * Errors that escape handlers — a throw inside a timer, a rejection nobody awaits — reach the
 * adapter's process-level hooks instead of killing the server. Each is attributed to the function
 * whose folder its stack names (the innermost frame under a registered folder), counted there,
 * and logged as one line of message and stack, never the compiled module source a runtime would
 * print; the same message again within a minute is only counted. An error no handler's frame
 * names (a thrown string has no stack at all) is logged unattributed, and the server serves on.
 */
export class HandlerEscapes {
  readonly #log: Logger;
  readonly #clock: Pick<Clock, "now">;
  readonly #owners = new Map<string, EscapeOwner[]>();
  readonly #logged = new Map<string, { at: number; since: number }>();

  constructor(options: { log: Logger; clock: Pick<Clock, "now"> }) {
    this.#log = options.log;
    this.#clock = options.clock;
  }

  /** Attributes escapes from files under `owner.folder` to it (the newest registration for a folder wins); returns what unregisters it. */
  register(owner: EscapeOwner): () => void {
    const list = this.#owners.get(owner.folder) ?? [];
    list.push(owner);
    this.#owners.set(owner.folder, list);
    return () => {
      const at = list.indexOf(owner);
      if (at >= 0) list.splice(at, 1);
      if (list.length === 0 && this.#owners.get(owner.folder) === list) this.#owners.delete(owner.folder);
    };
  }

  /** One escaped error, from the adapter's process-level hook. Never throws. */
  report(error: unknown, kind: EscapeKind): void {
    try {
      const stack = readableStack(error);
      const owner = this.#ownerOf(stack);
      owner?.count();
      const what = kind === "exception" ? "an uncaught exception" : "an unhandled promise rejection";
      const head = owner ? `function '${owner.name}' handler: ${what} escaped it (the server serves on)` : `${what} whose stack names no handler's file (the server serves on)`;
      const key = `${owner?.name ?? ""}\u0000${messageOf(error)}`;
      const now = this.#clock.now();
      const seen = this.#logged.get(key);
      if (seen && now - seen.at < RELOG_MS) {
        seen.since++;
        return;
      }
      if (!seen && this.#logged.size >= MAX_REMEMBERED) this.#logged.clear();
      const repeats = seen && seen.since > 0 ? ` (${seen.since} more time(s) in the last minute)` : "";
      this.#logged.set(key, { at: now, since: 0 });
      this.#log.error(`${head}${repeats}: ${shorten(stack, owner?.folder)}`);
    } catch {
      // Reporting must never become the next escape.
    }
  }

  /** The owner of the innermost frame that lies under a registered folder. */
  #ownerOf(stack: string): EscapeOwner | undefined {
    if (this.#owners.size === 0) return undefined;
    let best: { at: number; owner: EscapeOwner } | undefined;
    for (const [folder, owners] of this.#owners) {
      const at = stack.indexOf(folder.endsWith("/") ? folder : `${folder}/`);
      if (at >= 0 && (!best || at < best.at)) best = { at, owner: owners[owners.length - 1]! };
    }
    return best?.owner;
  }
}

/** Longest message and stack logged for one escape: a handler's error may carry anything. */
const MAX_LOGGED_CHARS = 4000;

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
function shorten(stack: string, folder: string | undefined): string {
  let text = stack;
  if (folder) {
    const repository = folder.slice(0, folder.lastIndexOf("/") + 1);
    if (repository.length > 1) text = text.split(repository).join("");
  }
  return text.length > MAX_LOGGED_CHARS ? `${text.slice(0, MAX_LOGGED_CHARS)}… (${text.length - MAX_LOGGED_CHARS} more characters)` : text;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : safeString(error);
}

function safeString(value: unknown): string {
  try {
    return String(value).slice(0, 500);
  } catch {
    return "(a value that cannot be shown)";
  }
}
