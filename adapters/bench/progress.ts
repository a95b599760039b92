/** Where progress goes: a write function and whether it is a terminal. */
export interface ProgressSink {
  write(text: string): void;
  isTTY: boolean;
}

/**
 * The progress indicator on stderr. On a terminal it is one line rewritten in place with `\r`
 * every quarter second; elsewhere (a log, a pipe) it prints one line per finished step instead.
 */
export class Progress {
  #sink: ProgressSink;
  #width = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #status: () => string = () => "";

  constructor(sink: ProgressSink) {
    this.#sink = sink;
  }

  /** Shows `status()` from now on (terminal only), refreshed until `stop()`. */
  follow(status: () => string): void {
    if (!this.#sink.isTTY) return;
    this.#status = status;
    this.#show();
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#show(), 250);
      this.#timer.unref?.();
    }
  }

  /** Reports a finished step: a line of its own when not on a terminal. */
  stepDone(line: string): void {
    if (!this.#sink.isTTY) this.#sink.write(`${line}\n`);
  }

  /** Stops refreshing and blanks the line, so the report starts on a clean line. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#sink.isTTY && this.#width > 0) this.#sink.write(`\r${" ".repeat(this.#width)}\r`);
    this.#width = 0;
  }

  #show(): void {
    const line = this.#status();
    this.#sink.write(`\r${line.padEnd(this.#width)}`);
    this.#width = line.length;
  }
}
