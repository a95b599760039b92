import type { Clock } from "./clock.ts";

/**
 * A log line any client can cause at will (an upload it aborts): the first of a window is
 * written, the rest of that window only counted, and the count written when the window closes —
 * so a client repeating it a thousand times a second writes one line per window, and nothing is
 * hidden without saying how much.
 */
export function repeatedLine(write: (message: string) => void, clock: Clock, windowMs = 10_000): (message: string) => void {
  let open = false;
  let held = 0;
  const close = () => {
    if (held > 0) write(`… and ${held} more like it in the last ${windowMs / 1000} s`);
    open = false;
    held = 0;
  };
  return (message) => {
    if (open) {
      held++;
      return;
    }
    write(message);
    open = true;
    clock.setTimeout(close, windowMs);
  };
}
