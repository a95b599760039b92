import { describe, expect, it } from "vitest";
import { FileRefused } from "../../../runtime/core/mod.ts";
import { readNamedFile } from "../../../runtime/repository/mod.ts";
import type { FolderReader } from "../../../runtime/repository/mod.ts";

const refusing = (error: Error): FolderReader => async () => {
  throw error;
};

describe("readNamedFile", () => {
  it("says a refusal as the request's fault, naming the file, with the ceiling's meaning only after a size refusal", async () => {
    const tooLarge = refusing(new FileRefused("is 20 bytes, over the ceiling of 10", { tooLarge: true }));
    await expect(readNamedFile(tooLarge, "labels.txt", "label file 'labels.txt'", { maxBytes: 10, ceiling: "for a label file" })).rejects.toMatchObject({
      code: "INVALID_ARG",
      message: "label file 'labels.txt' is 20 bytes, over the ceiling of 10 for a label file",
    });
    const fifo = refusing(new FileRefused("is a FIFO, not a regular file"));
    await expect(readNamedFile(fifo, "labels.txt", "label file 'labels.txt'", { maxBytes: 10, ceiling: "for a label file" })).rejects.toMatchObject({
      message: "label file 'labels.txt' is a FIFO, not a regular file",
    });
  });

  it("passes other failures on and a missing file as undefined", async () => {
    await expect(readNamedFile(refusing(new Error("EIO")), "a", "file 'a'")).rejects.toThrow("EIO");
    expect(await readNamedFile(async () => undefined, "a", "file 'a'")).toBeUndefined();
  });
});
