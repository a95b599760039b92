import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { functionSchema } from "../runtime/config/function-schema.ts";

// The docs stay true to the repository: README stays a landing page, every link in README and
// docs/ reaches a file (and a heading) that exists, and the function.yaml reference names every
// field the schema accepts.
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function markdown(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdown(path) : path.endsWith(".md") ? [path] : [];
  });
}

/** GitHub's anchor for a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_()[\]{}:,.!?'"/&+@]/g, "")
    .replace(/\s/g, "-");
}

function anchors(path: string): Set<string> {
  const text = readFileSync(path, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]!)));
}

const pages = [join(root, "README.md"), ...markdown(join(root, "docs")), join(root, "bench", "RESULTS.md"), ...markdown(join(root, "bench", "results"))];

describe("docs", () => {
  it("README is a landing page (at most about 250 lines)", () => {
    expect(readFileSync(join(root, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(250);
  });

  it("has the guides, reference and design pages README links to", () => {
    expect(pages.length).toBeGreaterThan(12);
  });

  it("every relative link reaches a file in the repository, and an anchor a heading of it", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, "utf8").replace(/```[\s\S]*?```/g, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!) || target!.startsWith("<")) continue; // http(s), mailto
        const [file, anchor] = target!.split("#") as [string, string | undefined];
        const path = file === "" ? page : resolve(dirname(page), file);
        const where = `${relative(root, page)} → ${target}`;
        if (!path.startsWith(root + "/") && path !== root) broken.push(`${where} (outside the repository)`);
        else if (!existsSync(path)) broken.push(`${where} (no such file)`);
        else if (anchor && path.endsWith(".md") && !anchors(path).has(anchor)) broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the function.yaml reference names every top-level field the schema accepts", () => {
    let schema = functionSchema("yaml") as unknown as { shape?: Record<string, unknown>; def?: { in?: unknown; innerType?: unknown; schema?: unknown } };
    for (let i = 0; i < 6 && !schema.shape; i++) schema = (schema.def?.in ?? schema.def?.innerType ?? schema.def?.schema) as typeof schema;
    const fields = Object.keys(schema.shape ?? {});
    expect(fields.length).toBeGreaterThan(15);
    const reference = readFileSync(join(root, "docs/reference/function-yaml.md"), "utf8");
    expect(fields.filter((f) => !new RegExp(`\\b${f}\\b`).test(reference))).toEqual([]);
  });
});
