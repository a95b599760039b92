// @ts-self-types="./load-limit-table.d.mts"
// The server-wide ceilings on what a function's config may ask for, once: each one's LoadLimits
// key, its flag and its default. load-limits.ts builds LoadLimits, the flags' names and the
// defaults from it; the CLI its options and its help (adapters/cli-usage.mjs). Plain JavaScript
// with no imports: `tensorfn --help` reads it before anything else loads.

/** @type {readonly import("./load-limit-table.d.mts").LoadLimitRow[]} */
export const LOAD_LIMIT_TABLE = [
  { key: "instances", flag: "--max-instances", default: 64 },
  { key: "threads", flag: "--max-threads", perCore: 4, default: 4 },
  { key: "batchSize", flag: "--max-batch-size", default: 65_536 },
  { key: "warmupElements", flag: "--max-warmup-elements", default: 16 * 2 ** 20, size: true },
  { key: "warmupRuns", flag: "--max-warmup-runs", default: 1000 },
  { key: "uploadBytes", flag: "--max-upload-size", default: 256 * 2 ** 20, size: true },
  { key: "uploadTotalBytes", flag: "--max-upload-total", default: 2 ** 30, size: true },
  { key: "apiFunctions", flag: "--max-api-functions", default: 64 },
  { key: "ensembleSteps", flag: "--max-ensemble-steps", default: 1024 },
  { key: "ensembleOutputRatio", flag: "--max-ensemble-output-ratio", default: 16 },
];

/**
 * A ceiling's default as help and docs show it: `16M` for a size, `<cores×4>` for one that grows
 * with the cores, the number otherwise.
 * @param {import("./load-limit-table.d.mts").LoadLimitRow} row
 */
export function shownDefault(row) {
  if (row.perCore) return `<cores×${row.perCore}>`;
  if (!row.size) return String(row.default);
  for (const [unit, bytes] of [["G", 2 ** 30], ["M", 2 ** 20], ["k", 2 ** 10]]) if (row.default % bytes === 0) return `${row.default / bytes}${unit}`;
  return String(row.default);
}
