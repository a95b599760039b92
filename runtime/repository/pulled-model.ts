import { invalidArg } from "../core/mod.ts";
import type { Platform } from "../core/mod.ts";
import { configFileOf, parseVersion } from "../config/mod.ts";
import type { FunctionEntry } from "./scan-repository.ts";

/** The file operations that read a pulled model's layout. */
export type LayoutReader = Pick<Platform, "realPath" | "stat" | "readDir">;

/**
 * A model ModelMesh's puller placed on disk, as a function folder named `name`. `modelPath` must lie
 * under `root` (the puller's model folder, symlinks followed). Layouts, as ModelMesh's Triton
 * adapter accepts them: a function folder (function.yaml or config.pbtxt, version folders), version
 * folders without a config (the highest one served, its one model file whatever its name), a folder
 * holding one model file, or the file itself; a folder holding just one folder is looked into.
 */
export async function pulledModelEntry(files: LayoutReader, root: string, name: string, modelPath: string): Promise<FunctionEntry> {
  const [base, real] = await Promise.all([files.realPath(root), files.realPath(modelPath)]);
  if (real === undefined) throw invalidArg(`modelPath '${modelPath}' does not exist`);
  if (base === undefined || !real.startsWith(`${base.replace(/\/+$/, "")}/`)) throw invalidArg(`modelPath '${modelPath}' is not under the ModelMesh model folder (--modelmesh-root)`);
  const found = await layout(files, real, 2);
  if (!found) {
    throw invalidArg(`modelPath '${modelPath}' holds no model tensorfn can serve: expected an .onnx file, a folder with one, version folders, or a function.yaml or config.pbtxt with its version folders`);
  }
  return { name, external: true, ...found };
}

async function layout(files: LayoutReader, path: string, depth: number): Promise<Omit<FunctionEntry, "name"> | undefined> {
  const stat = await files.stat(path);
  if (stat?.isFile) {
    const slash = path.lastIndexOf("/");
    return { dir: path.slice(0, slash), versions: [1], modelFile: path.slice(slash + 1) };
  }
  if (!stat?.isDirectory) return undefined;
  const children = await files.readDir(path);
  const config = configFileOf(children.filter((c) => c.isFile).map((c) => c.name));
  const versions = children
    .filter((c) => c.isDirectory)
    .map((c) => parseVersion(c.name))
    .filter((v): v is number => typeof v === "number")
    .sort((a, b) => a - b);
  if (config) return { dir: path, configFile: `${path}/${config}`, versions };
  if (versions.length > 0) {
    const highest = versions.at(-1)!;
    const models = (await files.readDir(`${path}/${highest}`)).filter((c) => !c.isDirectory && c.name.endsWith(".onnx"));
    return models.length === 1 ? { dir: path, versions: [highest], modelFile: `${highest}/${models[0]!.name}` } : { dir: path, versions: [highest] };
  }
  const models = children.filter((c) => !c.isDirectory && c.name.endsWith(".onnx"));
  if (models.length === 1) return { dir: path, versions: [1], modelFile: models[0]!.name };
  const folders = children.filter((c) => c.isDirectory && !c.name.startsWith("."));
  if (models.length === 0 && folders.length === 1 && depth > 0) return await layout(files, `${path}/${folders[0]!.name}`, depth - 1);
  return undefined;
}

/** The bytes on disk a pulled model would load: its one model file, or the .onnx files of its highest version. */
export async function pulledModelBytes(files: LayoutReader, entry: FunctionEntry): Promise<number> {
  if (entry.modelFile) return (await files.stat(`${entry.dir}/${entry.modelFile}`))?.size ?? 0;
  const highest = entry.versions.at(-1);
  if (highest === undefined) return 0;
  const folder = `${entry.dir}/${highest}`;
  const models = (await files.readDir(folder)).filter((c) => !c.isDirectory && c.name.endsWith(".onnx"));
  const sizes = await Promise.all(models.map(async (m) => (await files.stat(`${folder}/${m.name}`))?.size ?? 0));
  return sizes.reduce((a, b) => a + b, 0);
}
