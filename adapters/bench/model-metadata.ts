import { BenchError } from "./bench-error.ts";
import type { ModelMetadata } from "./request-body.ts";

/** What the benchmark learns about the model before it starts. */
export interface ModelInfo {
  metadata: ModelMetadata;
  /** From `/config` when the server has it; `undefined` when it does not. */
  maxBatchSize: number | undefined;
  /** Whether the first dimension of every input is the batch dimension. */
  batching: boolean;
}

/** `/v2/models/<m>[/versions/<v>]`, names escaped. */
export function modelPath(model: string, version?: string): string {
  return `/v2/models/${encodeURIComponent(model)}${version ? `/versions/${encodeURIComponent(version)}` : ""}`;
}

/**
 * Reads the model's metadata and, if the server offers the configuration extension, its
 * `max_batch_size`. Without a config the model counts as batching when every input's first
 * dimension is -1, which is how a batching model's metadata shows it.
 */
export async function fetchModelInfo(baseUrl: string, model: { name: string; version?: string }): Promise<ModelInfo> {
  const path = modelPath(model.name, model.version);
  const metadata = (await getJson(baseUrl, path, true)) as ModelMetadata;
  if (!Array.isArray(metadata?.inputs)) throw new BenchError(`GET ${path}: the metadata has no inputs array`, 1);
  const config = (await getJson(baseUrl, `${path}/config`, false)) as { max_batch_size?: unknown } | undefined;
  const maxBatchSize = typeof config?.max_batch_size === "number" ? config.max_batch_size : undefined;
  const batching = maxBatchSize !== undefined ? maxBatchSize > 0 : metadata.inputs.length > 0 && metadata.inputs.every((input) => input.shape?.[0] === -1);
  return { metadata, maxBatchSize, batching };
}

async function getJson(baseUrl: string, path: string, required: boolean): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(new URL(path.slice(1), baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`));
  } catch (error) {
    throw new BenchError(`GET ${baseUrl}${path} failed: ${causeOf(error)}`, 1);
  }
  const text = await response.text();
  if (response.status !== 200) {
    if (!required) return undefined;
    throw new BenchError(`GET ${path}: HTTP ${response.status}: ${errorText(text)}`, 1);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new BenchError(`GET ${path}: the answer is not JSON: ${text.slice(0, 200)}`, 1);
  }
}

/** The innermost message of a failed `fetch` ("connect ECONNREFUSED …" rather than "fetch failed"). */
export function causeOf(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  if (cause instanceof Error) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** The `error` field of a KServe error body, or the start of the body. */
export function errorText(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed?.error === "string") return parsed.error;
  } catch {
    // not JSON: fall through
  }
  return text.slice(0, 200);
}
