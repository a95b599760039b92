// The real ORT worker, except that a run whose first INT32 feed starts with -999 kills the thread
// from inside session.run: a worker that dies mid-run, deterministically.
import process from "node:process";
import { OrtSession } from "../../../runtime/backends/_ort-session.ts";
import "../../../runtime/backends/onnxruntime-worker.ts";

const run = OrtSession.prototype.run;
OrtSession.prototype.run = function (feeds) {
  const first = Object.values(feeds)[0]?.data;
  if (first instanceof Int32Array && first[0] === -999) process.exit(3);
  return run.call(this, feeds);
};
