/** One entry of a directory listing. */
export interface DirEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
}

/** Where a module does not compile (`Platform.checkModule`). */
export interface CompileProblem {
  file: string;
  line: number;
  column: number;
  message: string;
}

/** `file:line:col: message`, as compilers print it. */
export function formatCompileProblem(p: CompileProblem): string {
  return p.line > 0 ? `${p.file}:${p.line}:${p.column}: ${p.message}` : `${p.file}: ${p.message}`;
}

/** Leveled log lines; adapters decide where they go. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * A dedicated thread running one module, spoken to by messages with web Worker semantics: the
 * module uses `self.addEventListener("message", …)` and `self.postMessage(…)`.
 */
export interface WorkerHandle {
  /** `transfer` moves those buffers to the worker instead of copying them. */
  postMessage(message: unknown, transfer?: ArrayBuffer[]): void;
  onMessage(handler: (message: unknown) => void): void;
  /** Called once if the worker dies (uncaught error or exit). */
  onExit(handler: (reason: string) => void): void;
  terminate(): Promise<void>;
}

/** What a read of a file may take (`Platform.readFile`). */
export interface ReadOptions {
  /** Refuse (`FileRefused`) a file larger than this, before reading any of it. */
  maxBytes?: number;
}

/**
 * Why `Platform.readFile` would not read a path that exists: it is not a regular file (a FIFO, a
 * socket, a device, a folder) or it is larger than the caller allows. The message is the reason
 * alone ("is a FIFO, not a regular file"), never the path: callers put the name they show before it.
 */
export class FileRefused extends Error {
  override readonly name = "FileRefused";
  /** Refused for its size (over `maxBytes`), not for its kind. */
  readonly tooLarge: boolean;

  constructor(message: string, { tooLarge = false } = {}) {
    super(message);
    this.tooLarge = tooLarge;
  }
}

/**
 * Everything runtime-specific that `runtime/` needs. Adapters (Node, Bun, Deno) implement it;
 * the core never touches `process`, `Bun`, `Deno` or `node:*` itself. Paths are plain strings
 * joined with "/".
 */
export interface Platform {
  /** Runtime name and version, for the server metadata and logs ("node 20.19.0"). */
  readonly name: string;
  /**
   * A regular file's bytes. The file is opened without blocking and checked on the open descriptor
   * before any byte is read: anything else (a FIFO would hold one of the runtime's few I/O threads
   * until a writer came, a device would never end) and a file over `maxBytes` reject with
   * `FileRefused`. A missing or unreadable file rejects with the runtime's own error.
   */
  readFile(path: string, options?: ReadOptions): Promise<Uint8Array>;
  /** `readFile`, decoded as UTF-8. */
  readTextFile(path: string, options?: ReadOptions): Promise<string>;
  /**
   * `readFile` straight into shared memory (one copy, made off the event loop), for bytes a version
   * keeps and hands to worker threads. Optional: without it, `readFile` and a copy.
   */
  readSharedFile?(path: string, options?: ReadOptions): Promise<Uint8Array>;
  /** Entries of a directory; rejects when it does not exist. */
  readDir(path: string): Promise<DirEntry[]>;
  /** Size and kind of a path, or undefined when it does not exist. */
  stat(path: string): Promise<{ isFile: boolean; isDirectory: boolean; size: number; mtimeMs: number } | undefined>;
  /**
   * The canonical absolute path, symlinks resolved, or undefined when it does not exist. Model
   * files are opened only after their real path is checked to lie inside their function's folder.
   */
  realPath(path: string): Promise<string | undefined>;
  env(name: string): string | undefined;
  /** Logical CPU cores, used to share threads among model instances. */
  cpuCount(): number;
  readonly log: Logger;
  /**
   * Starts a worker thread running `module`. Absent where the runtime cannot run the native
   * backend off the main thread; backends then run in-process.
   */
  startWorker?(module: URL): WorkerHandle;
  /**
   * A fresh path named `name` in a private temporary directory, for a file a native library writes
   * (onnxruntime's optimised model), and how to remove it with its directory. Optional.
   */
  scratchPath?(name: string): Promise<{ path: string; remove(): Promise<void> }>;
  /**
   * Runs a full garbage collection now. Before `trimMemory`, where a function let model bytes go
   * (an unload, a reload, kept bytes replaced; sessions' own copies where they could not read the
   * kept ones in place): that is external memory an idle isolate would otherwise hold until it
   * collects, which it does not do while idle (bench/studies/dropped-shared-memory.mjs). Not after
   * a park that drops none: it stalls the event loop 10–20 ms for nothing. Optional.
   */
  collectGarbage?(): void;
  /** Returns freed heap memory to the OS (after a function parks or unloads). Optional. */
  trimMemory?(): void;
  /**
   * A plain ArrayBuffer over `bytes`' memory (a SharedArrayBuffer's), without a copy, or undefined.
   * onnxruntime-node's create refuses shared memory, where a kept model's bytes live; with this a
   * load from PARKED reads them in place. Optional: without it they are copied once per load.
   */
  plainView?(bytes: Uint8Array): ArrayBuffer | undefined;
  /**
   * SHA-256 of `chunks` in order, computed now (natively), as 64 lower-case hex digits. Optional:
   * without it the response cache uses WebCrypto's digest, which is asynchronous and costs a thread
   * hop (~0.1 ms here) per call. A hit pays one per request: a one-chunk digest should be one call.
   */
  sha256Hex?(chunks: readonly Uint8Array[]): string;
  /**
   * Imports the module at `path` (a function's handler; TypeScript included), evaluated afresh for
   * each new `tag` (a reload's new code) and shared for the same one. Absent: no handlers.
   */
  importModule?(path: string, tag: string): Promise<Record<string, unknown>>;
  /**
   * Compiles the module at `path` and the files it imports relatively, without running any of
   * it: each syntax error or unresolvable relative import, its file relative to `root` (line 0:
   * no position); empty when it compiles. Absent: handlers are checked only by importing them.
   */
  checkModule?(path: string, root: string): Promise<CompileProblem[]>;
  /**
   * Opens the POSIX shared-memory object `key` (`shm_open`'s name: "/name", one component) for
   * reading and writing — Triton's system shared-memory extension. Throws an Error saying why when
   * there is none by that name (or it is not a plain object). Absent where the platform has none.
   */
  openSharedMemory?(key: string): SharedMemoryObject;
  /**
   * The process's own Prometheus families in the text format — CPU seconds, resident memory, open
   * file descriptors, the event loop's lag, the heap (prom-client's default metrics) — appended to
   * every `/metrics` scrape. Optional.
   */
  processMetrics?(): Promise<string>;
  /**
   * Every GPU and MIG device as NVML reports it now (`libnvidia-ml.so.1`, loaded at run time), or
   * why there is none to read (no driver, no addon). A blocking call of a few NVML queries per
   * device: the runtime samples it on a timer, never on a request's path. Optional.
   */
  readGpus?(): GpuReadings;
  /**
   * Starts a child process that serves one function's instances (`isolation: process`; the
   * runtime's `serveFunctionProcess` on the other side), spoken to by messages that carry typed
   * arrays. Its exit — any cause, the memory cap included — is reported once with why. Optional:
   * absent, `isolation: process` fails to load, saying so.
   */
  startProcess?(options: ProcessOptions): ProcessHandle;
}

export interface ProcessOptions {
  /** Names the process in logs and errors ("ocr v1"). */
  label: string;
  /** Variables added to the server's environment (function.yaml `isolation.env`). */
  env?: Readonly<Record<string, string>>;
  /** Resident memory past which the process is killed (`isolation.max_memory`). */
  maxMemoryBytes?: number;
  /** The cores it may run on, every thread of it (a host policy's `cpu_cores`). */
  cpuCores?: readonly number[];
  /** The NUMA node it binds to (a host policy's `numa_node`). */
  numaNode?: number;
}

/** A child process as `startProcess` hands it back: a WorkerHandle whose `terminate` kills it. */
export interface ProcessHandle extends WorkerHandle {
  readonly pid: number | undefined;
  /** Kills it now (SIGKILL), reporting `reason` as why it exited. */
  kill(reason: string): void;
}

/** One GPU, or one MIG device of a GPU, as NVML reports it; a field NVML does not support there is absent. */
export interface GpuDevice {
  /** NVML's index (a MIG device's: its slot on its GPU). */
  index: number;
  uuid: string;
  name: string;
  /** A MIG device's GPU (its UUID). */
  parent?: string;
  /** 0–100 over NVML's last sample period; not on MIG devices. */
  utilizationPercent?: number;
  memoryTotalBytes?: number;
  memoryUsedBytes?: number;
  memoryFreeBytes?: number;
  powerMilliwatts?: number;
  powerLimitMilliwatts?: number;
  /** Since the driver loaded. */
  energyMillijoules?: number;
  temperatureCelsius?: number;
}

export type GpuReadings = { devices: GpuDevice[]; problem?: undefined } | { problem: string; devices?: undefined };

/** An open shared-memory object: read and written in place of the client's own mapping of it. */
export interface SharedMemoryObject {
  /** Its size in bytes when it was opened. */
  readonly size: number;
  /** A copy of `length` bytes from `offset`. */
  read(offset: number, length: number): Uint8Array;
  /** Writes `bytes` at `offset`. */
  write(offset: number, bytes: Uint8Array): void;
  close(): void;
}
