import type { Clock, Logger } from "../core/mod.ts";
import { RepeatGate, messageOf, readableStack, repeatsNote, shorten } from "./handler-stacks.ts";

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
  readonly #logged = new RepeatGate();

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
      const repeats = this.#logged.admit(`${owner?.name ?? ""}\u0000${messageOf(error)}`, this.#clock.now());
      if (repeats === undefined) return;
      this.#log.error(`${head}${repeatsNote(repeats)}: ${shorten(stack, owner?.folder)}`);
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
