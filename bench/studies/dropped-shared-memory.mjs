// Why a park collects garbage before malloc_trim: a SharedArrayBuffer nothing references any more
// stays in an idle process's RSS until its isolate collects, and an idle isolate does not. Prints RSS
// with a 100 MB one, then after dropping it, 15 s later without a collection, and 100 ms after one.
// Usage: node bench/studies/dropped-shared-memory.mjs
import { fullCollection } from "../../adapters/node/full-collection.mjs";

const rss = () => `${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let shared = new SharedArrayBuffer(100e6);
new Uint8Array(shared).fill(1);
console.log(`holding 100 MB of shared memory: RSS ${rss()}`);
shared = undefined;
await sleep(15_000);
console.log(`dropped it 15 s ago, no collection: RSS ${rss()}`);
const gc = fullCollection();
const t = performance.now();
gc();
const ms = performance.now() - t;
await sleep(100);
console.log(`100 ms after a full collection (${ms.toFixed(1)} ms): RSS ${rss()}`);
