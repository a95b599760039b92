import { invalidArg } from "../core/errors.ts";
import { shownJson } from "../core/shown-number.ts";
import type { Parameters } from "../core/inference.ts";

// Triton's system shared-memory extension, as a request names a tensor's place: parameters
// shared_memory_region, shared_memory_offset and shared_memory_byte_size instead of data.

/** A tensor's place in a registered region, as a request names it. */
export interface SharedRef {
  region: string;
  offset: number;
  byteSize: number;
}

/** Reads the bytes a request's tensor names in shared memory (call/shared-memory-regions.ts). */
export interface SharedMemoryReader {
  read(ref: SharedRef, what: string): Uint8Array;
}

/** A request's shared-memory parameters for tensor `what` ("input 'x'"), checked; undefined when it names no region. */
export function sharedRef(params: Parameters | undefined, what: string): SharedRef | undefined {
  if (params?.shared_memory_region === undefined) return undefined;
  const { shared_memory_region: region, shared_memory_offset: offset = 0, shared_memory_byte_size: byteSize } = params;
  if (typeof region !== "string" || region === "") throw invalidArg(`${what}: shared_memory_region must be a region's name, got ${JSON.stringify(region)}`);
  const whole = (value: unknown, key: string) => {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw invalidArg(`${what}: ${key} must be a byte count (an integer ≥ 0), got ${shownJson(value)}`);
    return value;
  };
  if (byteSize === undefined) throw invalidArg(`${what}: shared_memory_byte_size must be given with shared_memory_region`);
  return { region, offset: whole(offset, "shared_memory_offset"), byteSize: whole(byteSize, "shared_memory_byte_size") };
}

/** Parameters without the shared-memory keys (they say where a tensor travels, not what it is). */
export function withoutSharedKeys(params: Parameters): Parameters {
  const { shared_memory_region: _r, shared_memory_offset: _o, shared_memory_byte_size: _s, ...rest } = params;
  return rest;
}

/** An output's place in shared memory, refused with what cannot go with it (Triton's rules); undefined when it names none. */
export function sharedOutput(params: Parameters | undefined, name: string, binary: unknown): SharedRef | undefined {
  const ref = sharedRef(params, `output '${name}'`);
  if (ref && params!.classification !== undefined) throw invalidArg(`output '${name}': can't set both 'shared_memory_region' and 'classification'`);
  if (ref && binary === true) throw invalidArg(`output '${name}': can't set both 'shared_memory_region' and 'binary_data'`);
  return ref;
}
