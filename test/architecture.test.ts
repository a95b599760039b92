import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Every import/export-from specifier of the files under `dir`, with the importing file relative to the root. */
function edges(dir = "runtime"): { file: string; target: string }[] {
  return sources(join(root, dir)).flatMap((path) => {
    const text = readFileSync(path, "utf8");
    const specs = [...text.matchAll(/(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] ?? m[2]!);
    const file = relative(root, path);
    return specs.map((spec) => ({ file, target: spec.startsWith(".") ? relative(root, resolve(dirname(path), spec)) : spec }));
  });
}

/** The layer of a path under runtime/ ("http", "core"…, or "root" for runtime.ts and mod.ts). */
function layer(path: string): string {
  const parts = path.split("/");
  return parts.length > 2 ? parts[1]! : "root";
}

// Who may import whom: http → call → lifecycle → scheduler → backends; everyone may use core, config and
// tensor; core uses nothing. The composition root (runtime.ts, mod.ts) may use everything.
const allowed: Record<string, string[]> = {
  core: ["core"],
  config: ["core", "config", "tensor"],
  tensor: ["core", "tensor"],
  repository: ["core", "config", "repository"],
  backends: ["core", "config", "tensor", "backends"],
  scheduler: ["core", "config", "tensor", "scheduler"],
  // metrics implements the scheduler's observer interface and is wired in by lifecycle.
  metrics: ["core", "config", "scheduler", "metrics"],
  // The response cache holds answers as tensors; the lifecycle consults it around the scheduler.
  cache: ["core", "tensor", "cache"],
  // Handlers: a function's own code, served as a backend (backend: handler) by the lifecycle.
  pipeline: ["core", "config", "tensor", "backends", "pipeline"],
  lifecycle: ["core", "config", "tensor", "repository", "backends", "scheduler", "metrics", "cache", "pipeline", "lifecycle"],
  // The call pipeline: admission, decode, schedule, encode — protocol-neutral, below every route.
  call: ["core", "config", "tensor", "lifecycle", "pipeline", "call"],
  http: ["core", "config", "tensor", "call", "metrics", "http"],
  // gRPC is a protocol beside HTTP, never on it: access policy, API groups and error limits live in call/, below both.
  grpc: ["core", "config", "tensor", "call", "grpc"],
};

// Third-party packages, each confined to its folder (STYLE.md).
const packages: Record<string, string[]> = {
  "onnxruntime-node": ["backends"],
  "onnxruntime-web": ["backends"],
  "onnxruntime-common": ["backends"],
  "lru-cache": ["cache"],
  // Handlers' own metrics (ctx.metrics); the process's default metrics are the adapters'.
  "prom-client": ["metrics"],
  zod: ["config"],
  // A generator's tokenizer and chat template: text ↔ token ids, a codec like the tensor ones.
  "@huggingface/tokenizers": ["tensor"],
  "@huggingface/jinja": ["tensor"],
  yaml: ["config"],
  // Protobuf: Triton's config.pbtxt (text format), the gRPC protocol's messages, and the walk of an
  // ONNX model for the external data files it names (repository/onnx-external-data.ts).
  "@bufbuild/protobuf": ["config", "grpc", "repository"],
  "@bufbuild/protobuf/txtpb": ["config"],
  "@bufbuild/protobuf/codegenv2": ["config", "grpc"],
  // The gRPC server itself is an adapter's (node:http2): the runtime's service is plain methods.
  "@grpc/grpc-js": [],
};

describe("runtime/ import direction", () => {
  const all = edges();

  it("finds the imports it checks", () => {
    expect(all.length).toBeGreaterThan(20);
  });

  it("never reaches outside runtime/ or into node:*, Bun or Deno", () => {
    const bad = all.filter(({ target }) => target.startsWith("node:") || /^(adapters|functions|models|test|bench)\//.test(target));
    expect(bad).toEqual([]);
  });

  it("follows http|grpc → call → lifecycle → scheduler → backends", () => {
    const bad = all.filter(({ file, target }) => {
      if (!target.startsWith("runtime/")) return false;
      const from = layer(file);
      return from !== "root" && !allowed[from]?.includes(layer(target));
    });
    expect(bad).toEqual([]);
  });

  it("keeps each third-party package in its own folder", () => {
    const bad = all.filter(({ file, target }) => {
      const pkg = Object.keys(packages).find((p) => target === p || target.startsWith(`${p}/`));
      return pkg !== undefined && !packages[pkg]!.includes(layer(file));
    });
    expect(bad).toEqual([]);
  });
});

describe("one route table", () => {
  // Route paths are declared in runtime/http/routes.ts and nowhere else in the server: no route
  // registered with a literal path, no path literal or path regex of the API. The dashboard's
  // browser script and the `tensorfn bench` load generator are clients of the API, as tests are.
  const exempt = new Set(["runtime/http/routes.ts", "runtime/http/dashboard/dashboard-script.ts"]);
  const files = [...sources(join(root, "runtime")), ...sources(join(root, "adapters"))].filter((p) => !exempt.has(relative(root, p)) && !relative(root, p).startsWith("adapters/bench/"));

  it("finds the files it checks", () => {
    expect(files.length).toBeGreaterThan(50);
  });

  it("keeps route paths out of every other file", () => {
    const bad = files.flatMap((path) => {
      const lines = readFileSync(path, "utf8").split("\n");
      return lines.flatMap((line, i) => {
        if (/^\s*(\*|\/\/|\/\*)/.test(line)) return []; // comments may name a route
        const literal = /["'`]\/(v1|v2|metrics)(\/|["'`?])/.test(line);
        const pattern = /\\\/v[12]\\\/|\\\/metrics/.test(line);
        const registered = /\bapp\.(get|post|put|delete|patch|on)\(\s*["'`]/.test(line);
        return literal || pattern || registered ? [`${relative(root, path)}:${i + 1}: ${line.trim()}`] : [];
      });
    });
    expect(bad).toEqual([]);
  });
});

describe("test/ and bench/", () => {
  // What both need (starting a server in-process or as a process, the example repository, the fuzz
  // generators) lives once, in harness/; a bench never reaches into the test suite.
  const benchEdges = [...edges("bench"), ...edges("harness")];

  it("finds the imports it checks", () => {
    expect(benchEdges.filter(({ target }) => target.startsWith("harness/")).length).toBeGreaterThan(10);
  });

  it("bench/ and harness/ never import test/", () => {
    expect(benchEdges.filter(({ target }) => target.startsWith("test/"))).toEqual([]);
  });

  it("harness/ never imports bench/", () => {
    expect(benchEdges.filter(({ file, target }) => file.startsWith("harness/") && target.startsWith("bench/"))).toEqual([]);
  });
});

describe("file length", () => {
  // A runtime file over 400 lines says why in its first lines ("Over N lines: …"), N no more than it has.
  const files = sources(join(root, "runtime")).map((path) => ({ file: relative(root, path), lines: readFileSync(path, "utf8").split("\n") }));

  it("finds the files it checks", () => {
    expect(files.length).toBeGreaterThan(150);
  });

  it("no runtime/ file is over 400 lines without its reason in its first lines", () => {
    const unexplained = files
      .filter(({ lines }) => lines.length > 400)
      .filter(({ lines }) => {
        const said = /over (\d+) lines/i.exec(lines.slice(0, 10).join("\n"));
        return !said || Number(said[1]) > lines.length;
      })
      .map(({ file, lines }) => `${file} (${lines.length} lines)`);
    expect(unexplained).toEqual([]);
  });
});

describe("the walks of docs/design/architecture.md", () => {
  const doc = readFileSync(join(root, "docs/design/architecture.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Three walks"), doc.indexOf("Other paths worth knowing"));
  const walks = [...section.matchAll(/\*\*([^*]+)\*\* — (\d+) files[^\n]*\n([\s\S]*?)(?=\n\*\*|$)/g)].map((m) => ({
    name: m[1]!,
    count: Number(m[2]),
    files: [...new Set([...m[3]!.matchAll(/`((?:runtime|adapters)\/[\w./-]+\.ts)`/g)].map((f) => f[1]!))],
  }));
  // Imports by name: a name imported from a barrel (mod.ts) counts as imported from the file that defines it.
  const namedEdges = (dir: string) =>
    sources(join(root, dir)).flatMap((path) => {
      const text = readFileSync(path, "utf8");
      return [...text.matchAll(/(?:import|export)\s+(?:type\s+)?(\{[^}]*\}|\*)?[^;]*?from\s+["']([^"']+)["']/g)].map((m) => ({
        file: relative(root, path),
        names: m[1] === "*" || !m[1] ? ["*"] : m[1].slice(1, -1).split(",").map((n) => n.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!).filter(Boolean),
        target: m[2]!.startsWith(".") ? relative(root, resolve(dirname(path), m[2]!)) : m[2]!,
      }));
    });
  const all = [...namedEdges("runtime"), ...namedEdges("adapters")];
  const from = new Map<string, typeof all>();
  for (const edge of all) from.set(edge.file, [...(from.get(edge.file) ?? []), edge]);
  /** The files that define `name` as re-exported by barrel `target` (itself where it is not a barrel). */
  const definers = (target: string, name: string, depth = 0): string[] => {
    if (!target.endsWith("mod.ts") || depth > 5) return [target];
    return (from.get(target) ?? []).filter((e) => e.names.includes(name) || e.names.includes("*")).flatMap((e) => definers(e.target, name, depth + 1));
  };
  const imports = (file: string) => new Set((from.get(file) ?? []).flatMap((e) => e.names.flatMap((name) => definers(e.target, name))));

  it("finds the three walks and their files", () => {
    expect(walks.map((w) => w.name)).toEqual(["A KServe infer on Node, from the socket to `session.run` and back", "An OpenAI streamed chat", "A lazy load, a park, a wake"]);
    for (const walk of walks) expect(walk.files.length, walk.name).toBeGreaterThan(5);
  });

  it("says how many files each walk has, names only files that exist, each importing or imported by another of its walk", () => {
    for (const walk of walks) {
      expect(walk.files.length, walk.name).toBe(walk.count);
      for (const file of walk.files) {
        expect(statSync(join(root, file)).isFile(), file).toBe(true);
        const linked = walk.files.some((other) => other !== file && (imports(file).has(other) || imports(other).has(file)));
        expect(linked, `${file} is on the walk '${walk.name}'`).toBe(true);
      }
    }
  });
});
