import { RuntimeError } from "../core/mod.ts";
import { LIMIT_FLAGS } from "../config/mod.ts";
import type { LoadLimits } from "../config/mod.ts";

/** Files uploaded through the load API: by version, then by path inside the version folder. */
export type UploadedFiles = ReadonlyMap<number, ReadonlyMap<string, Uint8Array>>;

/** The bytes `files` hold, all versions and files together. */
export function uploadedBytes(files: UploadedFiles): number {
  let bytes = 0;
  for (const version of files.values()) for (const file of version.values()) bytes += file.byteLength;
  return bytes;
}

/**
 * Refuses a load-API upload that would pass the server's ceilings: model bytes in this request,
 * model bytes held for all uploaded functions together, and how many functions were registered by
 * upload. `others` are the uploaded functions already registered, by name (a reload of `name`
 * replaces its own bytes, so they do not count twice). Throws RESOURCE_EXHAUSTED (413).
 */
export function checkUploadQuota(name: string, files: UploadedFiles, others: ReadonlyMap<string, number>, limits: LoadLimits): void {
  const bytes = uploadedBytes(files);
  const refuse = (what: string, key: keyof LoadLimits) =>
    new RuntimeError("RESOURCE_EXHAUSTED", `failed to load '${name}': ${what}, over the server's ceiling of ${limits[key]} (${LIMIT_FLAGS[key]})`);
  if (bytes > limits.uploadBytes) throw refuse(`the uploaded files (file:…) hold ${bytes} bytes`, "uploadBytes");
  let held = bytes;
  for (const [other, size] of others) if (other !== name) held += size;
  if (held > limits.uploadTotalBytes) throw refuse(`uploaded functions would hold ${held} bytes of model files in all`, "uploadTotalBytes");
  const count = others.size + (others.has(name) ? 0 : 1);
  if (count > limits.apiFunctions) throw refuse(`this would make ${count} functions registered by upload`, "apiFunctions");
}
