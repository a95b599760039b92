import type { Tensor } from "../core/mod.ts";
import type { Backend, LoadOptions, Session } from "./backend.ts";

/**
 * Triton's `identity` test backend: output i is input i, byte for byte. Useful for protocol tests
 * and for measuring pure serving overhead, since it does no compute.
 */
export function createIdentityBackend(): Backend {
  return {
    name: "identity",
    load(_model: Uint8Array, options: LoadOptions): Promise<Session> {
      const signature = options.signature;
      if (!signature) throw new Error("identity backend needs the signature from the config");
      const pairs = signature.outputs.map((out, i) => [out.name, signature.inputs[i]!.name] as const);
      return Promise.resolve({
        signature,
        provider: "cpu",
        run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
          const outputs: Record<string, Tensor> = {};
          for (const [out, inp] of pairs) {
            const t = feeds[inp];
            if (t) outputs[out] = t;
          }
          return Promise.resolve(outputs);
        },
        release: () => Promise.resolve(),
      });
    },
  };
}
