// Worker entry: owns one ORT session (onnxruntime-node or onnxruntime-web) off the main thread, so
// a long run never blocks the event loop and N instances really execute in parallel. Speaks the
// messages of `_worker-protocol.ts` and, once a session is loaded, serves runs over the shared
// channel of `_shared-channel.ts`, blocking in Atomics.wait between them (a worker may block).
import { RuntimeError } from "../core/mod.ts";
import type { Tensor } from "../core/mod.ts";
import { errorMessage, OrtSession } from "./_ort-session.ts";
import { fastestRun } from "./fastest-run.ts";
import type { PlainView } from "./_ort-session.ts";
import { loadOrtWeb } from "./_ort-web.ts";
import { transferables } from "./_worker-protocol.ts";
import type { WorkerNotice, WorkerReply, WorkerRequest } from "./_worker-protocol.ts";
import {
  arenaBytesFor,
  arenaSizeFor,
  DONE,
  EPOCH,
  FETCH,
  fetchedNames,
  MAX_ARENA_BYTES,
  POSTED,
  readTensors,
  RUN_ID,
  STATE,
  STATUS,
  STATUS_BY_MESSAGE,
  STATUS_OK,
  SUBMITTED,
  writeTensors,
} from "./_shared-channel.ts";

interface WorkerScope {
  addEventListener(type: "message", listener: (event: { data: WorkerRequest | WorkerNotice }) => void): void;
  postMessage(message: WorkerReply, transfer?: ArrayBuffer[]): void;
  /** Where the adapter's worker bootstrap offers it (Node's does): `Platform.plainView` in this thread. */
  plainView?: PlainView;
  /** Where the bootstrap offers it: `Platform.collectGarbage` in this thread. */
  collectGarbage?(): void;
}

interface Channel {
  control: Int32Array;
  input: SharedArrayBuffer;
  output: SharedArrayBuffer;
  outputBytes: Uint8Array;
  spinMicros: number;
}

const scope = self as unknown as WorkerScope;
let session: OrtSession | undefined;
let channel: Channel | undefined;
/** Messages received, against the channel's POSTED: the wait loop leaves while any is unread. */
let received = 0;
let serving = false;
/**
 * Whether ORT accepts typed arrays over shared memory (onnxruntime-node under Deno refuses them
 * with "Invalid argument"); learnt on the first channel run, after which feeds are copied if not.
 */
let sharedViews: boolean | undefined;

/** Messages not yet handled: channel serving yields to them between runs. */
let unhandled = 0;
let chain: Promise<void> = Promise.resolve();

scope.addEventListener("message", ({ data }) => {
  received++;
  unhandled++;
  // One message at a time, in arrival order: a release that overtook a run still in flight made
  // ORT abort the process or leave the run unsettled (the "mixed sessions hung once" note).
  chain = chain
    .then(() => handle(data))
    .catch(() => undefined)
    .finally(() => void unhandled--)
    .then(serve);
});

async function handle(request: WorkerRequest | WorkerNotice): Promise<void> {
  if (request.op === "channel") return attach(request);
  try {
    switch (request.op) {
      case "load":
        await runPending();
        await session?.release();
        session = undefined;
        // Imported on demand: a worker serving onnxruntime-web never loads the native addon.
        const module = request.package === "web" ? await loadOrtWeb(request.settings.provider) : (await import("./_ort-node.ts")).ortNode;
        // A version's kept bytes arrive in shared memory, not cloned; OrtSession.create reads them in
        // place where the bootstrap offers a plain view, else copies them once, here.
        session = await OrtSession.create(module, request.model, request.settings, request.package === "web" ? undefined : scope.plainView);
        return scope.postMessage({ id: request.id, ok: true, signature: session.signature });
      case "run": {
        if (!session) throw new Error("run before load");
        const outputs = await session.run(request.feeds, request.outputs);
        return scope.postMessage({ id: request.id, ok: true, outputs }, transferables(outputs));
      }
      case "time": {
        // Timed here, where nothing else waits on this thread's event loop: the model's own cost.
        if (!session) throw new Error("time before load");
        const timed = session;
        return scope.postMessage({ id: request.id, ok: true, us: await fastestRun(() => timed.run(request.feeds), request.runs) });
      }
      case "release":
        await runPending();
        await session?.release();
        session = undefined;
        // The load's message still holds the model's bytes (a kept SharedArrayBuffer) in this heap,
        // and an idle worker does not collect: a park that replaced them left a model's size in RSS.
        scope.collectGarbage?.();
        return scope.postMessage({ id: request.id, ok: true });
    }
  } catch (error) {
    replyError(request.id, error);
  }
}

function attach(notice: WorkerNotice): void {
  const control = notice.control ? new Int32Array(notice.control) : channel?.control;
  const input = notice.input ?? channel?.input;
  const output = notice.output ?? channel?.output;
  if (!control || !input || !output) throw new Error("channel notice without a control block or arenas");
  channel = { control, input, output, outputBytes: new Uint8Array(output), spinMicros: notice.spinMicros ?? channel?.spinMicros ?? 0 };
}

/** Serves channel runs until a message waits to be read; every message handler ends by calling this again. */
async function serve(): Promise<void> {
  if (serving || !channel || !session) return;
  serving = true;
  try {
    while (waitForWork(channel)) await runSubmitted(channel, session);
  } finally {
    serving = false;
  }
}

/** Runs the channel's submitted run, if any, before the session is released or replaced. */
async function runPending(): Promise<void> {
  if (channel && session && Atomics.load(channel.control, STATE) === SUBMITTED) await runSubmitted(channel, session);
}

/** Blocks until a run is submitted (true) or a message was posted (false), spinning first if asked. */
function waitForWork({ control, spinMicros }: Channel): boolean {
  const spinUntil = spinMicros > 0 ? performance.now() + spinMicros / 1000 : 0;
  for (;;) {
    const epoch = Atomics.load(control, EPOCH);
    // Messages first: one may carry the grown arena a submitted run was written into. A release
    // or load among them runs the submitted run before it (runPending).
    if (unhandled > 0 || Atomics.load(control, POSTED) > received) return false;
    if (Atomics.load(control, STATE) === SUBMITTED) return true;
    // A short spin skips the futex sleep and wake when the next batch follows closely.
    if (spinUntil !== 0 && performance.now() < spinUntil) continue;
    Atomics.wait(control, EPOCH, epoch);
  }
}

async function runSubmitted(ch: Channel, current: OrtSession): Promise<void> {
  const { control } = ch;
  const id = control[RUN_ID]!;
  try {
    const inputNames = current.signature.inputs.map((i) => i.name);
    const wanted = fetchedNames(current.signature.outputs.map((o) => o.name), control[FETCH]!);
    let outputs: Record<string, Tensor>;
    try {
      outputs = await current.run(readTensors(control, ch.input, inputNames, sharedViews === false), wanted);
      sharedViews ??= true;
    } catch (error) {
      if (sharedViews !== undefined) throw error;
      outputs = await current.run(readTensors(control, ch.input, inputNames, true), wanted);
      sharedViews = false;
    }
    answer(ch, id, current.signature.outputs.map((o) => o.name), outputs);
  } catch (error) {
    replyError(id, error);
    control[STATUS] = STATUS_BY_MESSAGE;
  }
  Atomics.store(control, STATE, DONE);
  Atomics.notify(control, STATE);
}

/** Outputs into the arena when they fit; else by message, with a grown arena for the next time. */
function answer(ch: Channel, id: number, names: string[], outputs: Record<string, Tensor>): void {
  const bytes = arenaBytesFor(names, outputs);
  if (bytes >= 0 && bytes <= ch.output.byteLength) {
    writeTensors(ch.control, ch.outputBytes, names, outputs);
    ch.control[STATUS] = STATUS_OK;
    return;
  }
  let grown: SharedArrayBuffer | undefined;
  if (bytes > 0 && bytes <= MAX_ARENA_BYTES) {
    grown = new SharedArrayBuffer(arenaSizeFor(bytes));
    ch.output = grown;
    ch.outputBytes = new Uint8Array(grown);
  }
  scope.postMessage({ id, ok: true, outputs, output: grown }, transferables(outputs));
  ch.control[STATUS] = STATUS_BY_MESSAGE;
}

function replyError(id: number, error: unknown): void {
  const invalid = error instanceof RuntimeError && error.code === "INVALID_ARG";
  scope.postMessage({ id, ok: false, error: errorMessage(error), invalid });
}
