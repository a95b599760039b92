import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";

/** A server started as its own process, reachable at `url`. */
export interface ServerProcess {
  url: string;
  pid: number;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then SIGKILL after 10 s; resolves once it exited. */
  stop(): Promise<void>;
}

/**
 * Runs `command args…` and resolves once it prints an `http://127.0.0.1:<port>` URL; rejects if
 * it exits first or prints none within `timeoutMs`.
 */
export function startServerProcess(command: string, args: string[], options: { timeoutMs?: number } = {}): Promise<ServerProcess> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  let output = "";
  const timeoutMs = options.timeoutMs ?? 120_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")} printed no URL within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args.join(" ")} exited with ${code} before printing a URL:\n${output}`));
    };
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (!match || child.pid === undefined) return;
      clearTimeout(timer);
      child.off("exit", onExit);
      resolve({ url: match[1]!, pid: child.pid, output: () => output, stop: () => stopChild(child) });
    });
    child.once("exit", onExit);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
