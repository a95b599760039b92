export { ResponseCache } from "./response-cache.ts";
export type { CachedReply, ResponseCacheFigures } from "./response-cache.ts";
