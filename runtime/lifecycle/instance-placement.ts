import type { Accelerator, InstanceGroup, InstanceRateLimiter } from "../config/mod.ts";

/** Where one instance runs: the accelerator it asks its backend for, and the GPU if any. */
export interface Placement {
  accelerator: Accelerator;
  deviceId?: number;
  /** Its group's rate_limiter, if any. */
  rateLimiter?: InstanceRateLimiter;
}

/**
 * One placement per instance, from Triton's instance groups: KIND_CPU instances run on the CPU
 * whatever the function asks; KIND_GPU ones use CUDA (or TensorRT when the function names it),
 * `count` per listed GPU (GPU 0 when none is listed); KIND_AUTO and KIND_MODEL follow the
 * function's accelerator, on the listed GPUs when there are any.
 */
export function instancePlacements(groups: readonly InstanceGroup[], accelerator: Accelerator): Placement[] {
  const placements: Placement[] = [];
  for (const group of groups) {
    const repeat = (p: Placement) => {
      for (let i = 0; i < group.count; i++) placements.push(group.rate_limiter ? { ...p, rateLimiter: group.rate_limiter } : { ...p });
    };
    if (group.kind === "KIND_CPU") {
      repeat({ accelerator: "cpu" });
      continue;
    }
    const gpu = group.kind === "KIND_GPU";
    if (!gpu && group.gpus.length === 0) {
      repeat({ accelerator });
      continue;
    }
    const onGpu: Accelerator = gpu ? (accelerator === "tensorrt" ? "tensorrt" : "cuda") : accelerator;
    for (const deviceId of group.gpus.length > 0 ? group.gpus : [0]) repeat({ accelerator: onGpu, deviceId });
  }
  return placements.length > 0 ? placements : [{ accelerator }];
}
