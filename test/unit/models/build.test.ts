import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ASSETS, MODELS, PROJECT_ROOT, buildModels } from "../../../models/build.ts";
import { buildSimple } from "../../../models/simple.ts";

describe("buildModels", () => {
  it("writes each model and asset once, and again only when forced", { timeout: 60_000 }, async () => {
    const root = await mkdtemp(join(tmpdir(), "tensorfn-models-"));
    try {
      const lines: string[] = [];
      const log = (line: string) => lines.push(line);
      const written = await buildModels({ root, log });
      expect(Object.keys(MODELS)).toEqual(["simple", "simple_string", "mlp", "resnet", "ocr_cls", "ocr_det", "ocr_rec"]);
      expect(Object.keys(ASSETS)).toEqual(["ocr/ppocr_keys_v1.txt", "ocr_decode/ppocr_keys_v1.txt"]);
      expect(written).toEqual([
        ...Object.keys(MODELS).map((name) => join(root, "functions", name, "1", "model.onnx")),
        join(root, "functions", "ocr", "ppocr_keys_v1.txt"),
        join(root, "functions", "ocr_decode", "ppocr_keys_v1.txt"),
      ]);
      expect(lines[2]).toMatch(/^built functions\/mlp\/1\/model\.onnx \(12\.6 MB\)$/);
      expect(new Uint8Array(await readFile(written[0]))).toEqual(buildSimple());
      for (const path of written) expect((await stat(path)).size).toBeGreaterThan(100);

      expect(await buildModels({ root, log })).toEqual([]);
      expect(await buildModels({ root, log, force: true })).toHaveLength(9);
      expect(lines).toHaveLength(18);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("defaults to the project root", () => {
    expect(join(PROJECT_ROOT, "models", "build.ts")).toBe(fileURLToPath(new URL("../../../models/build.ts", import.meta.url)));
  });
});
