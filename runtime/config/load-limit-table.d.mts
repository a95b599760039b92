export interface LoadLimitRow {
  /** The LoadLimits field it sets. */
  key: "instances" | "threads" | "batchSize" | "warmupElements" | "warmupRuns" | "uploadBytes" | "uploadTotalBytes" | "apiFunctions" | "ensembleSteps" | "ensembleOutputRatio";
  /** The flag of `serve`, `dev` and `check` that sets it. */
  flag: string;
  /** Its default; with `perCore`, the least it is whatever the cores. */
  default: number;
  /** The default is this many per core (at least `default`). */
  perCore?: number;
  /** A byte size: shown and given with k/M/G. */
  size?: boolean;
}
export const LOAD_LIMIT_TABLE: readonly LoadLimitRow[];
export function shownDefault(row: LoadLimitRow): string;
