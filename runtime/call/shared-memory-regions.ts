import { invalidArg, RuntimeError } from "../core/mod.ts";
import type { SharedMemoryObject } from "../core/mod.ts";
import type { SharedRef } from "../tensor/mod.ts";

// Triton's system shared-memory extension: a same-host client registers a POSIX shared-memory
// object as a named region, then sends inputs and receives outputs by reference to it (parameters
// shared_memory_region, shared_memory_offset, shared_memory_byte_size) instead of in the message.

/** One registered region, as status reports it (Triton's field names). */
export interface RegionStatus {
  name: string;
  key: string;
  offset: number;
  byte_size: number;
}

/** Regions one server holds at once: each keeps its object open. */
export const MAX_REGIONS = 256;

/** Characters of a region's name. */
const MAX_NAME = 256;

/**
 * The registered regions of one server. Registering opens the object once (through the Platform,
 * which confines keys to POSIX shared memory) and checks the region lies inside it; every read and
 * write is checked against the region's bounds, so a request reaches no byte outside what was
 * registered.
 */
export class SharedMemoryRegions {
  readonly #open: ((key: string) => SharedMemoryObject) | undefined;
  readonly #maxTensorBytes: number;
  readonly #regions = new Map<string, { key: string; offset: number; byteSize: number; object: SharedMemoryObject }>();

  /** `maxTensorBytes`: the most one tensor may read from shared memory, as a request body (`--max-input-size`). */
  constructor(open: ((key: string) => SharedMemoryObject) | undefined, options: { maxTensorBytes: number }) {
    this.#open = open;
    this.#maxTensorBytes = options.maxTensorBytes;
  }

  /** Whether any region is registered (requests that could name one are then looked at). */
  get registered(): boolean {
    return this.#regions.size > 0;
  }

  /** Whether this platform has POSIX shared memory (Linux): the extension is listed only then. */
  get supported(): boolean {
    return this.#open !== undefined;
  }

  register(name: string, key: unknown, offset: unknown, byteSize: unknown): void {
    if (!this.#open) throw new RuntimeError("UNSUPPORTED", "system shared memory is not supported on this platform");
    if (name === "" || name.length > MAX_NAME) throw invalidArg(`a shared memory region needs a name of 1 to ${MAX_NAME} characters`);
    if (typeof key !== "string" || key === "") throw invalidArg("shared memory register request has no 'key' field (the shared-memory object's name)");
    const count = (value: unknown, field: string) => {
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw invalidArg(`shared memory register request: '${field}' must be a byte count (an integer ≥ 0), got ${JSON.stringify(value)}`);
      return value;
    };
    const start = count(offset ?? 0, "offset");
    if (byteSize === undefined) throw invalidArg("shared memory register request has no 'byte_size' field");
    const size = count(byteSize, "byte_size");
    if (this.#regions.has(name)) throw new RuntimeError("ALREADY_EXISTS", `shared memory region '${name}' is already registered`);
    if (this.#regions.size >= MAX_REGIONS) throw new RuntimeError("RESOURCE_EXHAUSTED", `${MAX_REGIONS} shared memory regions are registered; unregister one first`);
    let object: SharedMemoryObject;
    try {
      object = this.#open(key);
    } catch (error) {
      throw invalidArg(`cannot register shared memory region '${name}': ${(error as Error).message}`);
    }
    if (start + size > object.size) {
      object.close();
      throw invalidArg(`cannot register shared memory region '${name}': offset ${start} + byte_size ${size} runs past the end of '${key}' (${object.size} bytes)`);
    }
    this.#regions.set(name, { key, offset: start, byteSize: size, object });
  }

  /** Unregisters `name`, or every region when `name` is empty; a name not registered is no error (Triton's). */
  unregister(name: string): void {
    for (const [n, region] of this.#regions) {
      if (name !== "" && n !== name) continue;
      region.object.close();
      this.#regions.delete(n);
    }
  }

  /** Every region, or the one named (NOT_FOUND when it is not registered). */
  status(name: string): RegionStatus[] {
    if (name !== "" && !this.#regions.has(name)) throw new RuntimeError("NOT_FOUND", `Unable to find system shared memory region: '${name}'`);
    return [...this.#regions].filter(([n]) => name === "" || n === name).map(([n, r]) => ({ name: n, key: r.key, offset: r.offset, byte_size: r.byteSize }));
  }

  /** The bytes `ref` names, for tensor `what`. */
  read(ref: SharedRef, what: string): Uint8Array {
    const region = this.#within(ref, what);
    if (ref.byteSize > this.#maxTensorBytes) {
      throw new RuntimeError("RESOURCE_EXHAUSTED", `${what}: shared_memory_byte_size ${ref.byteSize} is over the ${this.#maxTensorBytes} bytes a request may carry (--max-input-size)`);
    }
    return region.object.read(region.offset + ref.offset, ref.byteSize);
  }

  /** Writes a tensor's bytes where `ref` says; they must fit its byte size. */
  write(ref: SharedRef, bytes: Uint8Array, what: string): void {
    if (bytes.byteLength > ref.byteSize) {
      throw invalidArg(`shared memory size specified with the request for ${what} (${ref.byteSize} bytes) should be at least ${bytes.byteLength} bytes to hold the results`);
    }
    const region = this.#within(ref, what);
    region.object.write(region.offset + ref.offset, bytes);
  }

  close(): void {
    this.unregister("");
  }

  #within(ref: SharedRef, what: string) {
    const region = this.#regions.get(ref.region);
    if (!region) throw invalidArg(`${what}: Unable to find shared memory region: '${ref.region}'`);
    if (ref.offset + ref.byteSize > region.byteSize) {
      throw invalidArg(`${what}: shared_memory_offset ${ref.offset} + shared_memory_byte_size ${ref.byteSize} runs past the end of region '${ref.region}' (${region.byteSize} bytes)`);
    }
    return region;
  }
}
