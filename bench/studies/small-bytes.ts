// What a small per-request buffer costs (issue 11): a new ArrayBuffer (malloc on the event loop,
// free on V8's sweeper thread) against a view carved from a shared slab (runtime/tensor/small-bytes.ts),
// each made among the kind of short-lived objects a request makes. Interleaved rounds, median ns.
// Usage: tsx bench/studies/small-bytes.ts [rounds=5] [bytes=300]
import { smallBytes } from "../../runtime/tensor/small-bytes.ts";

const rounds = Number(process.argv[2] ?? 5);
const bytes = Number(process.argv[3] ?? 300);
const garbage: unknown[] = new Array(16);
const churn = () => {
  for (let i = 0; i < 16; i++) garbage[i] = { at: i, parts: [i, i + 1] };
};
const variants: Record<string, () => Uint8Array> = {
  "new Uint8Array": () => new Uint8Array(bytes),
  "TextEncoder.encode": () => encoder.encode(text),
  smallBytes: () => smallBytes(bytes),
  "none (the objects alone)": () => EMPTY,
};
const encoder = new TextEncoder();
const text = "x".repeat(bytes);
const EMPTY = new Uint8Array(0);

const times = new Map<string, number[]>(Object.keys(variants).map((k) => [k, []]));
for (let r = 0; r < rounds; r++) {
  for (const [name, make] of Object.entries(variants)) {
    let sink = 0;
    const n = 200_000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      churn();
      sink += make().byteLength;
    }
    times.get(name)!.push(((performance.now() - t0) * 1e6) / n);
    if (sink < 0) console.log(sink);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const [name, xs] of times) console.log(`${name.padEnd(26)} ${median(xs).toFixed(0).padStart(6)} ns per request-sized step (${bytes} B; min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`);
