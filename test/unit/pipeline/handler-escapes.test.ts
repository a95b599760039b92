import { describe, expect, it } from "vitest";
import { HandlerEscapes, readableStack } from "../../../runtime/pipeline/mod.ts";
import { handlerStack } from "../../../runtime/pipeline/handler-stacks.ts";
import { FakeClock } from "../../support/fake-clock.ts";

function escapes() {
  const lines: string[] = [];
  const clock = new FakeClock();
  const registry = new HandlerEscapes({ log: { info() {}, warn() {}, error: (m) => lines.push(m) }, clock });
  const counts: Record<string, number> = {};
  const owner = (name: string, folder: string) => ({ name, folder, count: () => void (counts[name] = (counts[name] ?? 0) + 1) });
  return { lines, clock, registry, counts, owner };
}

function errorAt(message: string, ...frames: string[]): Error {
  const error = new Error(message);
  error.stack = [`Error: ${message}`, ...frames.map((f) => `    at ${f}`)].join("\n");
  return error;
}

describe("HandlerEscapes", () => {
  it("report() attributes an error to the function whose folder its innermost frame names, not one a later frame names", () => {
    const { registry, counts, lines, owner } = escapes();
    registry.register(owner("ocr", "/srv/repo/ocr"));
    registry.register(owner("ocr_prepare", "/srv/repo/ocr_prepare"));
    registry.report(errorAt("bad pixel", "decode (/srv/repo/ocr/ppocr.ts:10:3)", "preprocess (/srv/repo/ocr_prepare/handler.ts:4:1)"), "exception");
    expect(counts).toEqual({ ocr: 1 });
    expect(lines).toHaveLength(1);
    // Paths relative to the repository: the log names no absolute path of the function's files.
    expect(lines[0]).toBe("function 'ocr' handler: an uncaught exception escaped it (the server serves on): Error: bad pixel\n    at decode (ocr/ppocr.ts:10:3)\n    at preprocess (ocr_prepare/handler.ts:4:1)");
  });

  it("report() does not take a folder for its prefix's namesake (ocr vs ocr_prepare)", () => {
    const { registry, counts, owner } = escapes();
    registry.register(owner("ocr", "/srv/repo/ocr"));
    registry.report(errorAt("x", "f (/srv/repo/ocr_prepare/handler.ts:1:1)"), "rejection");
    expect(counts).toEqual({});
  });

  it("report() logs the same message of the same function once a minute, counting every one, and says how many it left out", () => {
    const { registry, counts, lines, clock, owner } = escapes();
    registry.register(owner("fn", "/r/fn"));
    const error = () => errorAt("again", "t (/r/fn/handler.ts:1:1)");
    for (let i = 0; i < 5; i++) registry.report(error(), "exception");
    expect(counts.fn).toBe(5);
    expect(lines).toHaveLength(1);
    clock.advance(60_000);
    registry.report(error(), "exception");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain("(4 more time(s) in the last minute)");
  });

  it("report() leaves an error unattributed once its function unregistered, and when it has no stack", () => {
    const { registry, counts, lines, owner } = escapes();
    const unregister = registry.register(owner("fn", "/r/fn"));
    unregister();
    registry.report(errorAt("late timer", "t (/r/fn/handler.ts:1:1)"), "exception");
    registry.report("a bare string", "rejection");
    expect(counts).toEqual({});
    expect(lines[0]).toMatch(/^an uncaught exception whose stack names no handler's file/);
    expect(lines[1]).toMatch(/^an unhandled promise rejection whose stack names no handler's file .*: thrown value: a bare string$/);
  });

  it("report() never throws, whatever was thrown", () => {
    const { registry } = escapes();
    const hostile = { toString() { throw new Error("no"); } };
    expect(() => registry.report(hostile, "exception")).not.toThrow();
    expect(() => registry.report(Object.create(null), "rejection")).not.toThrow();
  });
});

describe("readableStack()", () => {
  it("names a module compiled on the fly by its file, not by the data: URL holding its source", () => {
    const source = encodeURIComponent("x".repeat(5000));
    const file = encodeURIComponent("/srv/repo/fn/handler.ts?namespace=123");
    const error = errorAt("boom", `execute (data:text/javascript,${source}?filePath=${file}:2:961)`, "g (file:///srv/repo/fn/lib%20x.ts?tensorfn=3:1:2)");
    expect(readableStack(error)).toBe("Error: boom\n    at execute (/srv/repo/fn/handler.ts:2:961)\n    at g (/srv/repo/fn/lib x.ts:1:2)");
  });
});

describe("handlerStack()", () => {
  it("names files relative to the repository and cuts the frames below the function's last one", () => {
    const error = errorAt("boom", "<anonymous> (/srv/repo/fn/handler.ts:6:40)", "Array.map (<anonymous>)", "execute (/srv/repo/fn/handler.ts:6:13)", "HandlerHost.execute (/app/runtime/pipeline/handler-host.ts:81:66)", "async run (/app/x.ts:1:1)");
    expect(handlerStack(error, "/srv/repo/fn")).toBe("Error: boom\n    at <anonymous> (fn/handler.ts:6:40)\n    at Array.map (<anonymous>)\n    at execute (fn/handler.ts:6:13)\n    … 2 frames of tensorfn");
  });

  it("keeps a stack whole when no frame lies in the function's folder, or a folder's namesake holds it", () => {
    const error = errorAt("from a package", "parse (/srv/node_modules/yaml/index.js:1:1)", "f (/srv/repo/fn_other/handler.ts:2:2)");
    expect(handlerStack(error, "/srv/repo/fn")).toBe("Error: from a package\n    at parse (/srv/node_modules/yaml/index.js:1:1)\n    at f (fn_other/handler.ts:2:2)");
  });
});
