/** Characters of an error's message an answer carries: a message may quote whatever a client or a config held. */
export const MAX_ERROR_CHARS = 8192;

/** Where an answered error is logged: our own bugs to `error`; a client's aborted upload to `clientAborted` (else `error`). */
export interface ErrorLog {
  error(message: string): void;
  /** Expected, and a client can repeat it at will: the server's is summarized (`repeatedLine`). */
  clientAborted?(message: string): void;
}

/** An error's message as every protocol's answer shows it: absolute paths made relative (`redact`), cut at MAX_ERROR_CHARS. */
export function shownError(message: string, redact: (text: string) => string = (t) => t): string {
  const text = redact(message);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}… (${text.length - MAX_ERROR_CHARS} more characters)` : text;
}
