import type { Logger } from "../runtime/mod.ts";

/** One line per event on stderr, so stdout carries only what scripts read (the URL, check output). */
export function consoleLogger(): Logger {
  const line = (level: string, message: string) => console.error(`${new Date().toISOString()} ${level} ${message}`);
  return {
    info: (m) => line("info ", m),
    warn: (m) => line("warn ", m),
    error: (m) => line("error", m),
  };
}
