import { FileRefused, RuntimeError } from "../core/mod.ts";
import type { Platform, ReadOptions } from "../core/mod.ts";
import { modelPathProblem, resolveInside } from "../config/mod.ts";
import { externalDataReferences } from "./onnx-external-data.ts";

/**
 * The largest model file read: protobuf's ceiling on one message (2 GiB). Larger models keep their
 * weights in external data files beside the model, as Optimum's exports do.
 */
export const MAX_MODEL_FILE_BYTES = 2 ** 31;

/**
 * Reads a file of one folder by its path relative to it (forward slashes): undefined when it is
 * missing or lies outside; `FileRefused` when it is not a regular file or is over `maxBytes`.
 */
export type FolderReader = (relative: string, options?: ReadOptions) => Promise<Uint8Array | undefined>;

/**
 * A folder on disk as a FolderReader: a path is read only if its real path (symlinks followed)
 * lies inside the folder's; with `shared`, into shared memory where the platform can (a model's
 * bytes, which a version keeps and hands to worker threads).
 */
export function folderReader(platform: Platform, folder: string, { shared = false } = {}): FolderReader {
  return async (relative, options) => {
    const path = await resolveInside(platform, folder, relative);
    if (path === undefined) return undefined;
    try {
      return shared && platform.readSharedFile ? await platform.readSharedFile(path, options) : await platform.readFile(path, options);
    } catch (error) {
      if (error instanceof FileRefused) throw error;
      return undefined; // gone since, or unreadable: said as missing
    }
  };
}

/** Files the load API uploaded for one version (`file:<version>/<path>`), as a FolderReader. */
export function uploadedReader(files: ReadonlyMap<string, Uint8Array>): FolderReader {
  return async (relative) => files.get(relative);
}

/**
 * `read(relative)`, a refusal said as the request's fault (INVALID_ARG): `${shown} ${why}`, and
 * `ceiling` after it where the file was refused for its size ("for a label file").
 */
export async function readNamedFile(read: FolderReader, relative: string, shown: string, { maxBytes, ceiling }: { maxBytes?: number; ceiling?: string } = {}): Promise<Uint8Array | undefined> {
  try {
    return await read(relative, maxBytes === undefined ? undefined : { maxBytes });
  } catch (error) {
    if (!(error instanceof FileRefused)) throw error;
    throw new RuntimeError("INVALID_ARG", `${shown} ${error.message}${error.tooLarge && ceiling ? ` ${ceiling}` : ""}`);
  }
}

/**
 * Reads a model file. Errors name `shown` (repository-relative: `simple/1/model.onnx`), never an
 * absolute path, and say the same whether the file is missing, unreadable or outside.
 */
export async function readModelFile(read: FolderReader, relative: string, shown: string): Promise<Uint8Array> {
  const bytes = await readNamedFile(read, relative, `model file ${shown}`, { maxBytes: MAX_MODEL_FILE_BYTES });
  if (bytes === undefined) throw new RuntimeError("INVALID_ARG", `model file ${shown} was not found inside the function's folder`);
  return bytes;
}

/** An external data file handed to the backend with its model: `path` as the model names it. */
export interface ExternalDataFile {
  path: string;
  data: Uint8Array;
}

/**
 * The external data files an ONNX model (`model`, at `relative` in its version folder) names, read
 * from beside it: each `location` is taken relative to the model's own folder and must stay in the
 * version folder (`read` refuses what lies outside, symlinks followed), be a regular file and hold
 * the bytes its tensors say. onnxruntime gets them by name and reads nothing from disk itself: left
 * to it, a model loaded from bytes resolves locations against the server's working directory.
 * Errors: INVALID_ARG, naming `shown` and the tensor. Bytes this cannot read as a model name no
 * files: the backend refuses them with its own error (onnxruntime, given a table, still reads no file).
 */
export async function readExternalData(read: FolderReader, model: Uint8Array, relative: string, shown: string): Promise<ExternalDataFile[]> {
  const fail = (problem: string) => new RuntimeError("INVALID_ARG", `failed to load model ${shown}: ${problem}`);
  let references;
  try {
    references = externalDataReferences(model);
  } catch {
    return [];
  }
  const folder = relative.includes("/") ? relative.slice(0, relative.lastIndexOf("/") + 1) : "";
  const files = new Map<string, ExternalDataFile>();
  for (const { tensor, location, end } of references) {
    const named = `initializer '${cut(tensor)}' keeps its data in ${JSON.stringify(cut(location))}`;
    let file = files.get(location);
    if (!file) {
      if (modelPathProblem(location) !== undefined) throw fail(`${named}, which is not a plain path beside the model: external data must lie in the model's version folder`);
      const data = await readNamedFile(read, `${folder}${location}`, `failed to load model ${shown}: ${named}, which`);
      if (data === undefined) throw fail(`${named}, which is not in the model's version folder`);
      file = { path: location, data };
      files.set(location, file);
    }
    if (end !== undefined && end > file.data.byteLength) throw fail(`${named}, which holds ${file.data.byteLength} bytes; the tensor's end at ${end} lies past them`);
  }
  return [...files.values()];
}

/** A name from the model, as an answer quotes it: the model's own words, cut to a readable length. */
function cut(text: string): string {
  return text.length > 128 ? `${text.slice(0, 128)}…` : text;
}
