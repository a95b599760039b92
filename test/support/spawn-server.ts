import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FUNCTIONS } from "./start-server.ts";

export interface SpawnedServer {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** Resolves once the output matches `pattern` (rejects after `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** A throwaway repository holding copies of the named example functions. */
export function tempRepository(...names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "tensorfn-repo-"));
  for (const name of names) cpSync(join(FUNCTIONS, name), join(dir, name), { recursive: true });
  return dir;
}

/** Runs a server command and resolves once it prints its URL (rejects on exit or after `timeoutMs`). */
export function spawnServer(
  command: string,
  args: string[],
  options: { timeoutMs?: number; cwd?: string; env?: Record<string, string> } = {},
): Promise<SpawnedServer> {
  // Its own process group, so stop() reaches wrappers' children too (npm does not forward SIGTERM).
  const child = spawn(command, args, { cwd: options.cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1", ...options.env } });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child, "SIGKILL");
      reject(new Error(`no URL within ${options.timeoutMs ?? 60000} ms:\n${output}`));
    }, options.timeoutMs ?? 60000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({
          url: match[1]!,
          child,
          output: () => output,
          waitFor: (pattern, timeoutMs = 15000) =>
            new Promise<void>((done, fail) => {
              if (pattern.test(output)) return done();
              const timer = setTimeout(() => fail(new Error(`output never matched ${pattern}:\n${output}`)), timeoutMs);
              const check = () => {
                if (!pattern.test(output)) return;
                clearTimeout(timer);
                child.stdout!.off("data", check);
                child.stderr!.off("data", check);
                done();
              };
              child.stdout!.on("data", check);
              child.stderr!.on("data", check);
            }),
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done(child.exitCode);
              child.once("exit", (code) => done(code));
              killGroup(child, "SIGTERM");
            }),
        });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before printing a URL:\n${output}`));
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    child.kill(signal);
  }
}
