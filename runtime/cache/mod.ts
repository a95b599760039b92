export { ResponseCache } from "./response-cache.ts";
export type { ResponseCacheFigures } from "./response-cache.ts";
