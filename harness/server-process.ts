// The one way test/ and bench/ start a server as its own process (the CLI under Node, Bun or Deno,
// a hand-written comparison server, a raw-onnxruntime script): start it, learn its URL from what it
// prints, watch its output, stop it.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FUNCTIONS } from "./repositories.ts";

export interface SpawnedServer {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
  /** Resolves once the output matches `pattern` (rejects after `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** SIGTERM to its process group, SIGKILL after 10 s; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** A throwaway repository holding copies of the named example functions. */
export function tempRepository(...names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "tensorfn-repo-"));
  for (const name of names) cpSync(join(FUNCTIONS, name), join(dir, name), { recursive: true });
  return dir;
}

/** Runs a server command and resolves once it prints an `http://127.0.0.1:<port>` URL (rejects on exit or after `timeoutMs`, default 120 s). */
export function spawnServer(
  command: string,
  args: string[],
  options: { timeoutMs?: number; cwd?: string; env?: Record<string, string> } = {},
): Promise<SpawnedServer> {
  // Its own process group, so stop() reaches wrappers' children too (npm does not forward SIGTERM).
  const child = spawn(command, args, { cwd: options.cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1", ...options.env } });
  const timeoutMs = options.timeoutMs ?? 120_000;
  const what = [command, ...args].join(" ");
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child, "SIGKILL");
      reject(new Error(`${what} printed no URL within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before printing a URL:\n${output}`));
    };
    const onData = () => {
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (!match || child.pid === undefined) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      child.off("exit", onExit);
      resolve({ url: match[1]!, pid: child.pid, child, output: () => output, waitFor: (pattern, ms) => waitFor(child, () => output, pattern, ms), stop: () => stop(child) });
    };
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stdout!.on("data", onData);
    child.once("exit", onExit);
  });
}

/** The `host:port` of a spawned `serve --grpc-port`, once it printed its gRPC line. */
export async function grpcAddress(server: SpawnedServer): Promise<string> {
  const line = /gRPC \(KServe v2\) at (\S+)\n/;
  await server.waitFor(line);
  return line.exec(server.output())![1]!;
}

function waitFor(child: ChildProcess, output: () => string, pattern: RegExp, timeoutMs = 15_000): Promise<void> {
  return new Promise<void>((done, fail) => {
    if (pattern.test(output())) return done();
    const timer = setTimeout(() => fail(new Error(`output never matched ${pattern}:\n${output()}`)), timeoutMs);
    const check = () => {
      if (!pattern.test(output())) return;
      clearTimeout(timer);
      child.stdout!.off("data", check);
      child.stderr!.off("data", check);
      done();
    };
    child.stdout!.on("data", check);
    child.stderr!.on("data", check);
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((done) => {
    const kill = setTimeout(() => killGroup(child, "SIGKILL"), 10_000);
    child.once("exit", (code) => {
      clearTimeout(kill);
      done(code);
    });
    killGroup(child, "SIGTERM");
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    child.kill(signal);
  }
}
