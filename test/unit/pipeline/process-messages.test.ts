import { describe, expect, it } from "vitest";
import { processMessageProblem } from "../../../runtime/pipeline/process-messages.ts";
import type { PendingOp } from "../../../runtime/pipeline/process-messages.ts";

const pending = new Map<number, PendingOp>([[1, "load"], [2, "run"], [3, "release"]]);
const check = (message: unknown) => processMessageProblem(message, (id) => pending.get(id));
const tensor = { datatype: "FP32", shape: [2], data: new Float32Array(2) };

describe("processMessageProblem()", () => {
  it("believes the protocol's own messages", () => {
    expect(check({ id: 1, ok: true, session: 7, signature: { inputs: [{ name: "x", datatype: "FP32", shape: [-1, 2] }], outputs: [] } })).toBeUndefined();
    expect(check({ id: 2, ok: true, outputs: { y: tensor }, calls: [["execute", 1.5, "ok"]] })).toBeUndefined();
    expect(check({ id: 3, ok: true })).toBeUndefined();
    expect(check({ id: 2, ok: false, error: "bad input", code: "INVALID_ARG", status: 422 })).toBeUndefined();
    expect(check({ id: 0, metrics: [{ declare: "counter", spec: { name: "c", help: "" } }, { name: "c", method: "inc", labels: { a: "b" }, value: 1 }] })).toBeUndefined();
    expect(check({ id: 0, infer: { call: 4, target: "simple", inputs: { x: tensor }, outputs: ["y"] } })).toBeUndefined();
  });

  it("names what is wrong with anything else", () => {
    const cases: [unknown, RegExp][] = [
      ["text", /not an object/],
      [{ id: 9, ok: false, error: "x", code: "INTERNAL" }, /a reply to no request in flight \(id 9\)/],
      [{ id: "2", ok: true }, /no request in flight/],
      [{ id: 2, ok: false }, /an error reply without its message/],
      [{ id: 2, ok: false, error: "x", code: "TEAPOT" }, /code "TEAPOT", not one of the server's/],
      [{ id: 2, ok: false, error: "x", code: "INVALID_ARG", status: "abc" }, /status "abc", not an HTTP error status/],
      [{ id: 2, ok: false, error: "x", code: "INVALID_ARG", status: 200 }, /status 200/],
      [{ id: 2, ok: "yes" }, /ok is "yes"/],
      [{ id: 2, ok: true }, /a run reply without its outputs/],
      [{ id: 2, ok: true, outputs: { y: { datatype: "FP32", shape: [4], data: "no" } } }, /output "y" needs its data as Float32Array/],
      [{ id: 1, ok: true, session: 1 }, /a load reply without a signature/],
      [{ id: 2, ok: true, outputs: {}, calls: [["drop table", 1, "ok"]] }, /handler calls are not/],
      [{ id: 0, metrics: [{ name: "c", method: "constructor" }] }, /"constructor" that is not inc/],
      [{ id: 0, infer: { call: 1, target: "x", inputs: { a: 5 } } }, /input "a" is not a tensor/],
      [{ id: 5 }, /a notice with id 5/],
    ];
    for (const [message, problem] of cases) expect(check(message), JSON.stringify(message)).toMatch(problem);
  });
});
