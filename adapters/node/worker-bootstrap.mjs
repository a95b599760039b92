// Runs a runtime/ worker module inside a Node worker thread: gives it the web Worker globals it
// expects (self.addEventListener("message"), self.postMessage) over worker_threads' parentPort,
// and TypeScript support as bin.mjs registers it, unless the module comes compiled (Bun runs TypeScript itself).
import { parentPort, workerData } from "node:worker_threads";
import { fullCollection } from "./full-collection.mjs";

// `native` is given with a compiled module (compiled-sources.mjs): then nothing here needs TypeScript.
if (!process.versions.bun && !workerData.native) {
  const { registerTypeScript } = await import("./register-typescript.mjs");
  registerTypeScript();
}
const events = new EventTarget();
// Bun loads the addon too (N-API); where it is missing, plainView gives undefined and loads copy.
const { loadNative } = await import(workerData.native ?? "../../native/index.ts");
globalThis.self = {
  addEventListener: (type, listener) => events.addEventListener(type, listener),
  postMessage: (message, transfer) => parentPort.postMessage(message, transfer),
  plainView: (bytes) => loadNative()?.plainView(bytes),
  collectGarbage: () => fullCollection()(),
};
// Messages that arrive while the module loads are queued by the port until a listener exists.
await import(workerData.module);
parentPort.on("message", (data) => events.dispatchEvent(new MessageEvent("message", { data })));
