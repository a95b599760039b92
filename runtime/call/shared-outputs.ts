import type { InferRequest, InferResponse } from "../core/mod.ts";
import { encodeBinaryTensor, sharedRef } from "../tensor/mod.ts";
import type { OwnedRegions } from "./shared-memory-regions.ts";

/**
 * Writes each output a request placed in shared memory (`shared_memory_region` among its
 * parameters) into its region, in the binary extension's layout (BYTES with 4-byte lengths); the
 * protocol's answer then carries those outputs' shapes alone.
 */
export function writeSharedOutputs(response: InferResponse, request: InferRequest, regions: OwnedRegions | undefined): void {
  for (const requested of request.outputs ?? []) {
    const ref = sharedRef(requested.parameters, `output '${requested.name}'`);
    if (!ref) continue;
    const output = response.outputs.find((o) => o.name === requested.name);
    if (!output) continue; // the encoder names the missing output
    if (!regions) throw new Error("an output in shared memory passed a server without regions");
    regions.write(ref, encodeBinaryTensor(output.tensor), `output '${requested.name}'`);
  }
}

/** The bytes of `shared_memory_region`: a request body that holds them may name shared memory. */
const MARK = new TextEncoder().encode("shared_memory_region");

/** Whether a request body may place a tensor in shared memory: such a request's answer is never replayed from the reply cache. */
export function mentionsSharedMemory(body: Uint8Array): boolean {
  const first = MARK[0]!;
  for (let at = body.indexOf(first); at !== -1 && at + MARK.length <= body.byteLength; at = body.indexOf(first, at + 1)) {
    let i = 1;
    while (i < MARK.length && body[at + i] === MARK[i]) i++;
    if (i === MARK.length) return true;
  }
  return false;
}
