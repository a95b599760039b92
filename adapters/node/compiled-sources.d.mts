/** See compiled-sources.mjs. */
export interface CompiledSources {
  /** File URL of the compiled CLI (exports `runCli` and `nodeHost`). */
  cli: string;
  /** File URL of the compiled native/index.ts. */
  native: string;
  /** Compiled worker modules by their source's file URL. */
  workers: Record<string, string>;
}
export declare function compiledSources(options?: { cacheDir?: string }): Promise<CompiledSources | undefined>;
