import type { Accelerator, FunctionConfig } from "./function-config.ts";

/**
 * A function's configuration as written: validated and defaulted, but not yet completed from the
 * model. `completeConfig()` turns it into a `FunctionConfig`.
 *
 * Following Triton, an empty `input` (or `output`) list means "take them from the model", exactly
 * like an omitted one; `max_batch_size` is undefined when omitted, because an explicit 0 ("this
 * model does not batch") must stay distinguishable from "decide from the model".
 */
export interface DeclaredConfig extends Omit<FunctionConfig, "max_batch_size" | "accelerator"> {
  max_batch_size?: number;
  /** Undefined when function.yaml does not say: the server's `--accelerator` (default auto) applies. */
  accelerator?: Accelerator;
}
