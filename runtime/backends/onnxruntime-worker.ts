// Worker entry: owns one ORT session (onnxruntime-node or onnxruntime-web) off the main thread, so
// a long run never blocks the event loop and N instances really execute in parallel. Speaks the
// messages of `_worker-protocol.ts`.
import { RuntimeError } from "../core/mod.ts";
import { errorMessage, OrtSession } from "./_ort-session.ts";
import { loadOrtWeb } from "./_ort-web.ts";
import { transferables } from "./_worker-protocol.ts";
import type { WorkerReply, WorkerRequest } from "./_worker-protocol.ts";

interface WorkerScope {
  addEventListener(type: "message", listener: (event: { data: WorkerRequest }) => void): void;
  postMessage(message: WorkerReply, transfer?: ArrayBuffer[]): void;
}

const scope = self as unknown as WorkerScope;
let session: OrtSession | undefined;

scope.addEventListener("message", ({ data }) => void handle(data));

async function handle(request: WorkerRequest): Promise<void> {
  try {
    switch (request.op) {
      case "load":
        await session?.release();
        // Imported on demand: a worker serving onnxruntime-web never loads the native addon.
        const module = request.package === "web" ? await loadOrtWeb(request.settings.provider) : (await import("./_ort-node.ts")).ortNode;
        session = await OrtSession.create(module, request.model, request.settings);
        return scope.postMessage({ id: request.id, ok: true, signature: session.signature });
      case "run": {
        if (!session) throw new Error("run before load");
        const outputs = await session.run(request.feeds);
        return scope.postMessage({ id: request.id, ok: true, outputs }, transferables(outputs));
      }
      case "release":
        await session?.release();
        session = undefined;
        return scope.postMessage({ id: request.id, ok: true });
    }
  } catch (error) {
    const invalid = error instanceof RuntimeError && error.code === "INVALID_ARG";
    scope.postMessage({ id: request.id, ok: false, error: errorMessage(error), invalid });
  }
}
