import { RuntimeError } from "../core/mod.ts";
import type { Tensor } from "../core/mod.ts";
import type { Session } from "../backends/backend.ts";

export interface SelfHealingOptions {
  /** Creates a session like the lost one. */
  create: () => Promise<Session>;
  /** Told once per replacement started, with why the old session was lost. */
  onLost: (reason: string) => void;
  log: { warn(message: string): void; error(message: string): void };
}

/**
 * One model instance that outlives the thread it runs in. When the session reports its thread
 * dead (found when a run fails, or before one starts), a replacement is created; runs meanwhile
 * wait for it rather than fail, so queued requests are served once it is ready. Only the execution
 * that was on the thread when it died fails (and the scheduler re-runs each request of a shared
 * batch alone, so only a request that kills its thread keeps failing). The scheduler keeps seeing
 * one instance.
 */
export class SelfHealingSession implements Session {
  readonly signature: Session["signature"];
  readonly provider: string;
  readonly fallbackReason?: string;
  readonly optionsNotApplied?: string;
  /** The lost session's: a replacement is placed alike (the same load options). */
  readonly computeTurn?: (fn: () => void) => void;
  readonly #options: SelfHealingOptions;
  #current: Promise<Session>;
  /** The session `#current` resolved to, while no replacement is pending (saves an await per run). */
  #ready: Session | undefined;
  #released = false;
  readonly #replaced = new WeakSet<Session>();
  #lost = "";

  constructor(session: Session, options: SelfHealingOptions) {
    this.signature = session.signature;
    this.provider = session.provider;
    this.fallbackReason = session.fallbackReason;
    this.optionsNotApplied = session.optionsNotApplied;
    if (session.computeTurn) this.computeTurn = session.computeTurn.bind(session);
    this.#options = options;
    this.#current = Promise.resolve(session);
    this.#ready = session;
  }

  async run(feeds: Record<string, Tensor>, options?: { signal?: AbortSignal }): Promise<Record<string, Tensor>> {
    let session = this.#ready ?? (await this.#current);
    if (session.alive === false && !this.#released) {
      // It died between executions: nothing was lost, so this run waits for the replacement.
      this.#replace(session, "its thread stopped while idle");
      session = await this.#current;
    }
    try {
      return await session.run(feeds, options);
    } catch (error) {
      if (session.alive === false && !this.#released) this.#replace(session, (error as Error).message);
      throw error;
    }
  }

  /** Why the instance was lost, while its replacement is being made; undefined otherwise. */
  get replacing(): string | undefined {
    return this.#ready === undefined && !this.#released ? this.#lost : undefined;
  }

  async release(): Promise<void> {
    this.#released = true;
    await (await this.#current.catch(() => undefined))?.release();
  }

  /** Starts one replacement for `dead`; runs that failed on the same dead session share it. */
  #replace(dead: Session, reason: string): void {
    if (this.#replaced.has(dead)) return;
    this.#replaced.add(dead);
    this.#options.onLost(reason);
    this.#lost = reason;
    this.#options.log.warn(`instance lost (${reason}); starting a replacement`);
    void dead.release().catch(() => undefined); // frees what the dead thread left behind (its slot in the worker pool)
    this.#ready = undefined;
    const next = this.#options.create().catch((error: Error): Session => {
      this.#options.log.error(`could not replace a lost instance: ${error.message}`);
      // A stand-in that fails, and is itself replaced on its first failure: the next try.
      return {
        signature: this.signature,
        provider: this.provider,
        alive: false,
        run: () => Promise.reject(new RuntimeError("UNAVAILABLE", `instance lost and not replaced: ${error.message}`)),
        release: async () => {},
      };
    });
    this.#current = next;
    void next.then((session) => {
      if (this.#current === next) this.#ready = session;
    });
  }
}
