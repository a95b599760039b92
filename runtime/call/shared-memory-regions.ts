import { invalidArg, RuntimeError, shownJson } from "../core/mod.ts";
import type { SharedMemoryObject } from "../core/mod.ts";
import type { SharedMemoryReader, SharedRef } from "../tensor/mod.ts";
import type { HeaderLookup } from "./direct-body.ts";
import { bearerKey } from "./bearer-key.ts";

// Triton's system shared-memory extension: a same-host client registers a POSIX shared-memory
// object as a named region, then sends inputs and receives outputs by reference to it (parameters
// shared_memory_region, shared_memory_offset, shared_memory_byte_size) instead of in the message.
// A region belongs to the key that registered it: another key's calls see no region by that name.

/** One registered region, as status reports it (Triton's field names). */
export interface RegionStatus {
  name: string;
  key: string;
  offset: number;
  byte_size: number;
}

/** Regions one server holds at once: each keeps its object open (a file descriptor). */
export const MAX_REGIONS = 256;

/** Regions one key may hold where the server has keys, so that one key cannot take every slot. */
export const MAX_REGIONS_PER_KEY = 64;

/**
 * Whom a call acts for, as regions are owned: the SHA-256 of its bearer key where the server has
 * keys (access control has let the call in, so the key is valid or the route open), else "" — one
 * owner for every call of a server without keys. The key itself is never kept.
 */
export type RegionOwner = (header: HeaderLookup) => Promise<string>;

/** The RegionOwner of a server with keys (`keyed`) or without. */
export function regionOwner(keyed: boolean): RegionOwner {
  if (!keyed) return async () => "";
  // Digests of the keys seen last: a keyed server has few, and a call need not hash its key again.
  const seen = new Map<string, string>();
  return async (header) => {
    const token = bearerKey(header);
    if (typeof token !== "string") return "";
    let owner = seen.get(token);
    if (owner === undefined) {
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
      owner = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
      if (seen.size >= 64) seen.clear();
      seen.set(token, owner);
    }
    return owner;
  };
}

interface Region {
  key: string;
  offset: number;
  byteSize: number;
  object: SharedMemoryObject;
}

/** Characters of a region's name. */
const MAX_NAME = 256;

/**
 * The registered regions of one server, by owner (`RegionOwner`) and name: each method takes the
 * caller's owner and sees that owner's regions alone, so another key's region reads exactly as one
 * that does not exist (the same answers: 400 in an inference, 404 from status, nothing to
 * unregister). Registering opens the object once (through the Platform, which confines keys to
 * POSIX shared memory) and checks the region lies inside it; every read and write is checked
 * against the region's bounds, so a request reaches no byte outside what was registered.
 */
export class SharedMemoryRegions {
  readonly #open: ((key: string) => SharedMemoryObject) | undefined;
  readonly #maxTensorBytes: number;
  readonly #perOwner: number;
  readonly #owners = new Map<string, Map<string, Region>>();
  #count = 0;
  /** Whom a call acts for (see RegionOwner). */
  readonly ownerOf: RegionOwner;

  /**
   * `maxTensorBytes`: the most one tensor may read from shared memory, as a request body
   * (`--max-input-size`). `ownerOf`: whom a call acts for (default: everyone is one owner).
   */
  constructor(open: ((key: string) => SharedMemoryObject) | undefined, options: { maxTensorBytes: number; ownerOf?: RegionOwner; perOwner?: number }) {
    this.#open = open;
    this.#maxTensorBytes = options.maxTensorBytes;
    this.ownerOf = options.ownerOf ?? regionOwner(false);
    this.#perOwner = options.perOwner ?? MAX_REGIONS;
  }

  /** Whether any region is registered (requests that could name one are then looked at). */
  get registered(): boolean {
    return this.#count > 0;
  }

  /** Whether this platform has POSIX shared memory (Linux): the extension is listed only then. */
  get supported(): boolean {
    return this.#open !== undefined;
  }

  register(owner: string, name: string, key: unknown, offset: unknown, byteSize: unknown): void {
    if (!this.#open) throw new RuntimeError("UNSUPPORTED", "system shared memory is not supported on this platform");
    if (name === "" || name.length > MAX_NAME) throw invalidArg(`a shared memory region needs a name of 1 to ${MAX_NAME} characters`);
    if (typeof key !== "string" || key === "") throw invalidArg("shared memory register request has no 'key' field (the shared-memory object's name)");
    const count = (value: unknown, field: string) => {
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw invalidArg(`shared memory register request: '${field}' must be a byte count (an integer ≥ 0), got ${shownJson(value)}`);
      return value;
    };
    const start = count(offset ?? 0, "offset");
    if (byteSize === undefined) throw invalidArg("shared memory register request has no 'byte_size' field");
    const size = count(byteSize, "byte_size");
    if (size === 0) throw invalidArg("shared memory register request: 'byte_size' must be at least 1: a region of no bytes holds no tensor");
    const own = this.#owners.get(owner);
    if (own?.has(name)) throw new RuntimeError("ALREADY_EXISTS", `shared memory region '${name}' is already registered`);
    // With one owner (no keys) the server's ceiling below is the only one.
    if (this.#perOwner < MAX_REGIONS && (own?.size ?? 0) >= this.#perOwner) throw new RuntimeError("RESOURCE_EXHAUSTED", `${this.#perOwner} shared memory regions are registered with this key; unregister one first`);
    if (this.#count >= MAX_REGIONS) throw new RuntimeError("RESOURCE_EXHAUSTED", `${MAX_REGIONS} shared memory regions are registered; unregister one first`);
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
    if (!this.#owners.has(owner)) this.#owners.set(owner, new Map());
    this.#owners.get(owner)!.set(name, { key, offset: start, byteSize: size, object });
    this.#count++;
  }

  /** Unregisters the owner's `name`, or every region of the owner when `name` is empty; a name not registered is no error (Triton's). */
  unregister(owner: string, name: string): void {
    const own = this.#owners.get(owner);
    for (const [n, region] of own ?? []) {
      if (name !== "" && n !== name) continue;
      region.object.close();
      own!.delete(n);
      this.#count--;
    }
    if (own?.size === 0) this.#owners.delete(owner);
  }

  /** Every region of the owner, or the one named (NOT_FOUND when it has none by that name). */
  status(owner: string, name: string): RegionStatus[] {
    const own = this.#owners.get(owner) ?? new Map<string, Region>();
    if (name !== "" && !own.has(name)) throw new RuntimeError("NOT_FOUND", `Unable to find system shared memory region: '${name}'`);
    return [...own].filter(([n]) => name === "" || n === name).map(([n, r]) => ({ name: n, key: r.key, offset: r.offset, byte_size: r.byteSize }));
  }

  /** The owner's regions as a decoder reads them and an encoder writes into them. */
  as(owner: string): OwnedRegions {
    return { read: (ref, what) => this.#read(owner, ref, what), write: (ref, bytes, what) => this.#write(owner, ref, bytes, what) };
  }

  #read(owner: string, ref: SharedRef, what: string): Uint8Array {
    const region = this.#within(owner, ref, what);
    if (ref.byteSize > this.#maxTensorBytes) {
      throw new RuntimeError("RESOURCE_EXHAUSTED", `${what}: shared_memory_byte_size ${ref.byteSize} is over the ${this.#maxTensorBytes} bytes a request may carry (--max-input-size)`);
    }
    try {
      return region.object.read(region.offset + ref.offset, ref.byteSize);
    } catch (error) {
      throw objectChanged(what, ref, error);
    }
  }

  /** Writes a tensor's bytes where `ref` says; they must fit its byte size. */
  #write(owner: string, ref: SharedRef, bytes: Uint8Array, what: string): void {
    if (bytes.byteLength > ref.byteSize) {
      throw invalidArg(`shared memory size specified with the request for ${what} (${ref.byteSize} bytes) should be at least ${bytes.byteLength} bytes to hold the results`);
    }
    const region = this.#within(owner, ref, what);
    try {
      region.object.write(region.offset + ref.offset, bytes);
    } catch (error) {
      throw objectChanged(what, ref, error);
    }
  }

  close(): void {
    for (const owner of [...this.#owners.keys()]) this.unregister(owner, "");
  }

  #within(owner: string, ref: SharedRef, what: string): Region {
    const region = this.#owners.get(owner)?.get(ref.region);
    if (!region) throw invalidArg(`${what}: Unable to find shared memory region: '${ref.region}'`);
    if (ref.offset + ref.byteSize > region.byteSize) {
      throw invalidArg(`${what}: shared_memory_offset ${ref.offset} + shared_memory_byte_size ${ref.byteSize} runs past the end of region '${ref.region}' (${region.byteSize} bytes)`);
    }
    return region;
  }
}

/** One owner's regions, for one call: inputs read from them, outputs written into them. */
export interface OwnedRegions extends SharedMemoryReader {
  write(ref: SharedRef, bytes: Uint8Array, what: string): void;
}

/** A region whose object changed under it since it was registered (it shrank): the client's doing, a 400. */
function objectChanged(what: string, ref: SharedRef, error: unknown): RuntimeError {
  return invalidArg(`${what}: shared memory region '${ref.region}' can no longer be used: ${(error as Error).message} (its object changed since it was registered; register it again)`);
}
