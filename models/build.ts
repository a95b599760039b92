/**
 * Writes every example model into the function repository:
 * `<root>/functions/<name>/1/model.onnx`. Run by `npm run prepare`
 * (`tsx models/build.ts [--force]`) and callable from tests or tooling.
 */
import { existsSync, realpathSync } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildMlp } from "./mlp.ts";
import { buildRecogniser, copyPpocr } from "./ppocr.ts";
import { buildResnet } from "./resnet.ts";
import { buildSimpleString } from "./simple-string.ts";
import { buildSimple } from "./simple.ts";

/**
 * Produces a model file at the given path; `upToDate` (where a model's recipe changed since
 * checkouts built it) tells whether an existing file is already what it writes.
 */
type Writer = ((path: string) => Promise<void>) & { upToDate?: (path: string) => Promise<boolean> };

function fromBytes(build: () => Uint8Array): Writer {
  return (path) => writeFile(path, build());
}

/** Function names and how each model file is made. */
export const MODELS: Readonly<Record<string, Writer>> = {
  simple: fromBytes(buildSimple),
  simple_string: fromBytes(buildSimpleString),
  mlp: fromBytes(buildMlp),
  resnet: fromBytes(buildResnet),
  ocr_cls: copyPpocr("cls"),
  ocr_det: copyPpocr("det"),
  ocr_rec: buildRecogniser,
};

/** Other files the examples need, by path under functions/ (git-ignored like the models). */
export const ASSETS: Readonly<Record<string, Writer>> = {
  "ocr/ppocr_keys_v1.txt": copyPpocr("dictionary"),
  "ocr_decode/ppocr_keys_v1.txt": copyPpocr("dictionary"),
};

/** The project root: the parent of this file's directory. */
export const PROJECT_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** Options for `buildModels`; `root` defaults to the project root. */
export interface BuildOptions {
  root?: string;
  force?: boolean;
  log?: (line: string) => void;
}

/**
 * Write each model to `<root>/functions/<name>/1/model.onnx` and each asset to its path under
 * functions/, skipping files that exist unless `force`. Returns the paths written.
 */
export async function buildModels(options: BuildOptions = {}): Promise<string[]> {
  const root = options.root ?? PROJECT_ROOT;
  const log = options.log ?? console.log;
  const written: string[] = [];
  const targets = [
    ...Object.entries(MODELS).map(([name, write]) => [join(root, "functions", name, "1", "model.onnx"), write] as const),
    ...Object.entries(ASSETS).map(([file, write]) => [join(root, "functions", ...file.split("/")), write] as const),
  ];
  for (const [path, write] of targets) {
    if (!options.force && existsSync(path) && ((await write.upToDate?.(path)) ?? true)) continue;
    await mkdir(dirname(path), { recursive: true });
    // Write beside the target and rename, so an interrupted build never
    // leaves a truncated model that later runs would skip as "existing".
    const partial = `${path}.partial`;
    try {
      await write(partial);
      await rename(partial, path);
    } finally {
      await rm(partial, { force: true });
    }
    const { size } = await stat(path);
    log(`built ${relative(root, path)} (${formatSize(size)})`);
    written.push(path);
  }
  return written;
}

function formatSize(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`;
}

function isMain(): boolean {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return resolve(process.argv[1]) === fileURLToPath(import.meta.url);
  }
}

if (isMain()) {
  await buildModels({ force: process.argv.includes("--force") });
}
