/**
 * How long a request waits for an on-demand load by default, and a version's warm-up may take
 * (`--load-timeout-secs`).
 */
export const DEFAULT_LOAD_TIMEOUT_MS = 120_000;
