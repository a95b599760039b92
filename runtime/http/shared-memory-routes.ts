import { RuntimeError } from "../core/mod.ts";
import { jsonReply } from "../call/mod.ts";
import type { SharedMemoryRegions } from "../call/mod.ts";
import { jsonBody } from "./repository-routes.ts";
import type { RouteHandlers, RouteRequest } from "./routes.ts";

/**
 * Triton's shared-memory extensions over HTTP: system shared memory registered, listed and
 * unregistered for real, each caller's own regions (call/shared-memory-regions.ts); CUDA shared memory has no region to list
 * or unregister (a client's clean-up works) and cannot be registered.
 */
export function sharedMemoryHandlers(ctx: { sharedMemory?: SharedMemoryRegions; maxInputBytes: number }) {
  const regions = () => ctx.sharedMemory ?? unsupported("system shared memory");
  return {
    "system-shm-status": async (r: RouteRequest) => jsonReply(200, regions().status(await regions().ownerOf(r.header), r.params.region ?? "")),
    "system-shm-register": async (r: RouteRequest) => {
      const body = await jsonBody(r, ctx.maxInputBytes);
      regions().register(await regions().ownerOf(r.header), r.params.region!, body.key, body.offset, body.byte_size);
      return jsonReply(200, {});
    },
    "system-shm-unregister": async (r: RouteRequest) => {
      await jsonBody(r, ctx.maxInputBytes);
      regions().unregister(await regions().ownerOf(r.header), r.params.region ?? "");
      return jsonReply(200, {});
    },
    "cuda-shm-status": (r: RouteRequest) => {
      if (r.params.region) throw new RuntimeError("NOT_FOUND", `Unable to find cuda shared memory region: '${r.params.region}'`);
      return jsonReply(200, []);
    },
    "cuda-shm-register": () => unsupported("CUDA shared memory"),
    "cuda-shm-unregister": async (r: RouteRequest) => {
      await jsonBody(r, ctx.maxInputBytes);
      return jsonReply(200, {});
    },
  } satisfies Partial<RouteHandlers>;
}

function unsupported(what: string): never {
  throw new RuntimeError("UNSUPPORTED", `${what} is not supported by this server; send tensors in the request`);
}
