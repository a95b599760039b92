// A full garbage collection of the calling thread's heap, on demand (Platform.collectGarbage, and
// the worker bootstrap's for each ORT worker). Bun has one; Node's `gc` is V8's, exposed by
// `--expose-gc`: set at run time, the flag gives new contexts the function (the one context made
// here to fetch it).
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let collect;

/** @returns {() => void} */
export function fullCollection() {
  if (collect) return collect;
  if (globalThis.Bun) return (collect = () => globalThis.Bun.gc(true));
  setFlagsFromString("--expose-gc");
  return (collect = runInNewContext("gc"));
}
