import type { Logger } from "../runtime/mod.ts";

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogOptions {
  /** The least severe level written (`--log-level`); default info. The runtime has no debug lines yet: debug writes what info does. */
  level?: LogLevel;
  /** `text`: `<time> <level> <message>`; `json`: one object per line, for log shippers (`--log-format`). */
  format?: LogFormat;
}

/**
 * `--log-level` and `--log-format` as the command line gives them (`--flag value` or
 * `--flag=value`), read before the platform exists; an invalid value is left to the CLI's own
 * flag check, which names it.
 */
export function logOptionsFrom(args: readonly string[]): LogOptions {
  const value = (flag: string) => {
    const i = args.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
    if (i < 0) return undefined;
    return args[i]!.includes("=") ? args[i]!.slice(flag.length + 1) : args[i + 1];
  };
  const level = value("--log-level");
  const format = value("--log-format");
  return {
    level: (LOG_LEVELS as readonly string[]).includes(level ?? "") ? (level as LogLevel) : undefined,
    format: (LOG_FORMATS as readonly string[]).includes(format ?? "") ? (format as LogFormat) : undefined,
  };
}

/** The log options as environment variables, for a child process (logOptionsFromEnv reads them). */
export function logEnv(log: LogOptions): Record<string, string> {
  return { ...(log.level && { TENSORFN_LOG_LEVEL: log.level }), ...(log.format && { TENSORFN_LOG_FORMAT: log.format }) };
}

/** What logEnv set, as the child reads it. */
export function logOptionsFromEnv(env: Record<string, string | undefined>): LogOptions {
  return logOptionsFrom([...(env.TENSORFN_LOG_LEVEL ? ["--log-level", env.TENSORFN_LOG_LEVEL] : []), ...(env.TENSORFN_LOG_FORMAT ? ["--log-format", env.TENSORFN_LOG_FORMAT] : [])]);
}

/** One line per event on stderr, so stdout carries only what scripts read (the URL, check output). */
export function consoleLogger(options: LogOptions = {}): Logger {
  const least = LOG_LEVELS.indexOf(options.level ?? "info");
  const line =
    options.format === "json"
      ? (level: LogLevel, message: string) => console.error(JSON.stringify({ time: new Date().toISOString(), level, message }))
      : (level: LogLevel, message: string) => console.error(`${new Date().toISOString()} ${level.padEnd(5)} ${message}`);
  const at = (level: LogLevel) => (LOG_LEVELS.indexOf(level) <= least ? (m: string) => line(level, m) : () => {});
  return { info: at("info"), warn: at("warn"), error: at("error") };
}
