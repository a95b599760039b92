// The pieces of one served request at concurrency 1, under the runtime that runs this file, printed
// as JSON: a worker round trip carrying a 2 kB buffer (worker_threads under Node and Bun, a web
// Worker under Deno, as tensorfn's platforms use) by postMessage and over shared memory (the worker
// blocked in Atomics.wait, this thread woken by Atomics.waitAsync, 2 kB copied each way: the
// hop of runtime/backends/_shared-channel.ts), and onnxruntime-node's mlp run in this thread
// and inside such a worker, with tensorfn's session options for one instance; and the p50 time
// setTimeout(0.5 ms) and setTimeout(2 ms) take. `<runtime> bench/suites/runtimes/hops.ts <model.onnx>`; bench/suites/runtimes.ts runs it.
const deno = (globalThis as { Deno?: { args: string[] } }).Deno;
const isWorker = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined" || (await import("node:worker_threads")).isMainThread === false;

const ROUNDS = 3000;

/** Microseconds per call of `step`, after a warm-up. */
async function time(step: () => Promise<unknown>, n = ROUNDS): Promise<number> {
  for (let i = 0; i < n / 10; i++) await step();
  const started = performance.now();
  for (let i = 0; i < n; i++) await step();
  return ((performance.now() - started) * 1000) / n;
}

async function mlpRun(path: string): Promise<number> {
  const ort = await import("onnxruntime-node");
  const { readFile } = await import("node:fs/promises");
  const { availableParallelism } = await import("node:os");
  // tensorfn's settings for one instance: every core for intra-op threads, no spinning.
  const options = { intraOpNumThreads: availableParallelism(), extra: { session: { intra_op: { allow_spinning: "0" } } } };
  const session = await ort.InferenceSession.create(new Uint8Array(await readFile(path)), options as never);
  const feeds = { [session.inputNames[0]!]: new ort.Tensor("float32", new Float32Array(512).fill(0.1), [1, 512]) };
  return await time(() => session.run(feeds), 1000);
}

/** A worker that echoes buffers back, and on "mlp" measures the model run in its own thread. */
interface Channel {
  send(message: unknown, transfer?: ArrayBuffer[]): void;
  next(): Promise<any>; // deno-lint-ignore no-explicit-any
  close(): Promise<void>;
}

async function startWorker(): Promise<Channel> {
  let waiting: ((m: unknown) => void) | undefined;
  const deliver = (m: unknown) => waiting?.(m);
  const next = () => new Promise<any>((resolve) => (waiting = resolve)); // deno-lint-ignore no-explicit-any
  const url = new URL(import.meta.url);
  if (deno) {
    const worker = new Worker(url.href, { type: "module" });
    worker.onmessage = (e) => deliver(e.data);
    return { send: (m, t) => worker.postMessage(m, { transfer: t ?? [] }), next, close: async () => worker.terminate() };
  }
  const { Worker: NodeWorker } = await import("node:worker_threads");
  // Under Node, TypeScript workers load through tsx, as adapters/node/worker-bootstrap.mjs does.
  const worker = (globalThis as { Bun?: unknown }).Bun
    ? new NodeWorker(url)
    : new NodeWorker(`import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`, { eval: true });
  worker.on("message", deliver);
  return { send: (m, t) => worker.postMessage(m, t), next, close: async () => void (await worker.terminate()) };
}

/** Word 0: 0 idle, 1 request written, 2 answer written, 3 stop. Bytes 8…: 2 kB in, then 2 kB out. */
function sharedEcho(shared: SharedArrayBuffer): void {
  const state = new Int32Array(shared, 0, 2);
  const request = new Uint8Array(shared, 8, 2048);
  const answer = new Uint8Array(shared, 8 + 2048, 2048);
  for (;;) {
    const s = Atomics.load(state, 0);
    if (s === 3) return;
    if (s !== 1) {
      Atomics.wait(state, 0, s);
      continue;
    }
    answer.set(request);
    Atomics.store(state, 0, 2);
    Atomics.notify(state, 0);
  }
}

async function sharedRoundTrip(worker: Channel): Promise<number> {
  const shared = new SharedArrayBuffer(8 + 4096);
  const state = new Int32Array(shared, 0, 2);
  const request = new Uint8Array(shared, 8, 2048);
  const answer = new Uint8Array(shared, 8 + 2048, 2048);
  const input = new Uint8Array(2048).fill(7);
  worker.send({ shared });
  const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<string> | string } }).waitAsync;
  const us = await time(async () => {
    request.set(input);
    Atomics.store(state, 0, 1);
    Atomics.notify(state, 0);
    while (Atomics.load(state, 0) === 1) {
      const wait = waitAsync(state, 0, 1);
      if (wait.async) await wait.value;
    }
    answer.slice(); // the output copied out, as the channel does
    Atomics.store(state, 0, 0);
  });
  Atomics.store(state, 0, 3);
  Atomics.notify(state, 0);
  return us;
}

if (isWorker) {
  const { parentPort } = await import("node:worker_threads");
  const post = (m: unknown, t?: ArrayBuffer[]) => (parentPort ? parentPort.postMessage(m, t) : (self as unknown as Worker).postMessage(m, { transfer: t ?? [] }));
  const onMessage = async (data: { buf?: ArrayBuffer; mlp?: string; shared?: SharedArrayBuffer }) => {
    if (data.mlp) post({ mlpUs: await mlpRun(data.mlp) });
    else if (data.shared) sharedEcho(data.shared);
    else post(data, [data.buf!]);
  };
  if (parentPort) parentPort.on("message", onMessage);
  else self.onmessage = (e: MessageEvent) => void onMessage(e.data);
} else {
  const path = deno?.args[0] ?? process.argv[2]!;
  const worker = await startWorker();
  let buf = new ArrayBuffer(2048);
  const roundTripUs = await time(async () => {
    worker.send({ buf }, [buf]);
    buf = (await worker.next()).buf;
  });
  const mlpMainUs = await mlpRun(path);
  worker.send({ mlp: path });
  const { mlpUs: mlpWorkerUs } = await worker.next();
  const sharedRoundTripUs = await sharedRoundTrip(worker);
  await worker.close();
  // The batcher waits out max_queue_delay_microseconds on a timer: how late does one fire?
  const timer = async (ms: number) => {
    const waits: number[] = [];
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, ms));
      waits.push(performance.now() - started);
    }
    return waits.sort((a, b) => a - b)[100]! * 1000;
  };
  const timeout500usUs = await timer(0.5);
  const timeout2msUs = await timer(2);
  const runtime = deno ? "deno" : (globalThis as { Bun?: unknown }).Bun ? "bun" : "node";
  console.log(JSON.stringify({ runtime, roundTripUs, sharedRoundTripUs, mlpMainUs, mlpWorkerUs, timeout500usUs, timeout2msUs }));
  if (deno) (deno as unknown as { exit(code: number): void }).exit(0);
}
