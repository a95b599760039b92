import { fileURLToPath } from "node:url";

/** The example repository, functions/, which tests and benches serve or copy from. */
export const FUNCTIONS = fileURLToPath(new URL("../functions", import.meta.url));
