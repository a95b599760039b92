import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from "node:fs";
import type { SharedMemoryObject } from "../runtime/mod.ts";

/** Where Linux keeps POSIX shared-memory objects (`shm_open` creates /dev/shm/<name>). */
const SHM_DIR = "/dev/shm";

/**
 * `Platform.openSharedMemory` on Linux: the object's file under /dev/shm, opened read-write without
 * following a symlink (another local user's link cannot point it at a file of ours) and only when
 * it is a plain file. Reads and writes go through the file: the same pages the client maps, one copy.
 * Undefined where there is no /dev/shm.
 */
export function posixSharedMemory(): ((key: string) => SharedMemoryObject) | undefined {
  if (process.platform !== "linux") return undefined;
  return (key) => {
    const name = key.startsWith("/") ? key.slice(1) : key;
    if (name === "" || name === "." || name === ".." || /[/\0]/.test(name) || name.length > 255) {
      throw new Error(`'${key}' is not a shared-memory key: one name, optionally after a '/'`);
    }
    let fd: number;
    try {
      fd = openSync(`${SHM_DIR}/${name}`, constants.O_RDWR | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Error(code === "ENOENT" ? `no shared-memory object '${key}'` : `shared-memory object '${key}' cannot be opened (${code})`);
    }
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      closeSync(fd);
      throw new Error(`'${key}' is not a shared-memory object`);
    }
    return {
      size: stat.size,
      read(offset, length) {
        const bytes = new Uint8Array(length);
        let done = 0;
        while (done < length) {
          const n = readSync(fd, bytes, done, length - done, offset + done);
          if (n === 0) throw new Error(`shared-memory object '${key}' ends before byte ${offset + length}`);
          done += n;
        }
        return bytes;
      },
      write(offset, bytes) {
        // Never past the object's end as it is now: writing there would grow the client's object (and /dev/shm).
        const size = fstatSync(fd).size;
        if (offset + bytes.byteLength > size) throw new Error(`shared-memory object '${key}' now ends at byte ${size}, before byte ${offset + bytes.byteLength}`);
        let done = 0;
        while (done < bytes.byteLength) done += writeSync(fd, bytes, done, bytes.byteLength - done, offset + done);
      },
      close: () => closeSync(fd),
    };
  };
}
