// Platform.readFile for every adapter (node:fs/promises, which Bun and Deno implement): a file is
// opened with O_NONBLOCK and checked on its descriptor before a byte is read. A plain open of a FIFO
// waits in one of libuv's four I/O threads until a writer comes (four such loads stalled every file
// read and gzip of the server), and a device such as /dev/zero never ends; checking the path first
// and opening it after would leave a window to swap the file.
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { FileRefused } from "../runtime/mod.ts";
import type { ReadOptions } from "../runtime/mod.ts";

/** The bytes of the regular file at `path` (in shared memory with `shared`), refused per `FileRefused`. */
export async function readRegularFile(path: string, options: ReadOptions & { shared?: boolean } = {}): Promise<Uint8Array> {
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await file.stat();
    if (!stat.isFile()) throw new FileRefused(`is ${kindOf(stat)}, not a regular file`);
    if (options.maxBytes !== undefined && stat.size > options.maxBytes) throw new FileRefused(`is ${stat.size} bytes, over the ceiling of ${options.maxBytes}`, { tooLarge: true });
    // The size read now is all that is read: a file that grows meanwhile cannot grow the read.
    const bytes = new Uint8Array(options.shared ? new SharedArrayBuffer(stat.size) : new ArrayBuffer(stat.size));
    let at = 0;
    for (let read = -1; at < stat.size && read !== 0; at += read) read = (await file.read(bytes, at, stat.size - at, at)).bytesRead;
    return at === stat.size ? bytes : bytes.subarray(0, at);
  } finally {
    await file.close();
  }
}

function kindOf(stat: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (stat.isDirectory()) return "a folder";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "not a plain file";
}
