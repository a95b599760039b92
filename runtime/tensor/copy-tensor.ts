import type { Tensor } from "../core/mod.ts";

/**
 * A tensor with its own data buffer (BYTES elements copied too): what a worker thread may take
 * ownership of (it is sent the buffers) while the original stays usable.
 */
export function copyTensor(tensor: Tensor): Tensor {
  const data = Array.isArray(tensor.data) ? tensor.data.map((b) => b.slice()) : tensor.data.slice();
  return { ...tensor, shape: [...tensor.shape], data } as Tensor;
}
