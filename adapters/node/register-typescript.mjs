// TypeScript for Node: tsx for everything, then tensorfn's own sources through
// typescript-hooks.mjs (hooks registered last run first).
import { register } from "node:module";
import { register as registerTsx } from "tsx/esm/api";

export function registerTypeScript() {
  registerTsx();
  register("./typescript-hooks.mjs", import.meta.url);
}
